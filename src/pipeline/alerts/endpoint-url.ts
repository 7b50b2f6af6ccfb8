// A subscription's endpoint: https:// to any host, http:// only to a host the operator allows
// (alerts.allowed_http_hosts); no credentials or fragment in it. Checked where it is written.
import { GatewayError } from "../../errors/catalogue.js";

export const MAX_ENDPOINT_URL_LENGTH = 2048;

/** The URL as stored, or invalid_request naming the field. */
export function checkEndpointUrl(text: string, allowedHttpHosts: readonly string[], param = "url"): string {
  const refuse = (message: string): never => {
    throw new GatewayError("invalid_request", `${param}: ${message}`, { param });
  };
  if (text.length > MAX_ENDPOINT_URL_LENGTH) refuse(`at most ${MAX_ENDPOINT_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse("not a URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") refuse("must start with https:// (or http:// to an allowed host)");
  if (url.protocol === "http:" && !allowedHttpHosts.includes(url.hostname.toLowerCase())) refuse(`http:// only to a host in alerts.allowed_http_hosts; use https://`);
  if (url.username || url.password || url.hash) refuse("no user, password or fragment");
  return url.toString();
}
