// An upstream answer other than 2xx or 429 is returned to the client, mapped to a catalogue type and
// with the upstream's message scrubbed. Upstream credential errors are the operator's problem, not
// the client's, so they never surface as the client's auth_error.
import { GatewayError, type ErrorType } from "../errors/catalogue.js";
import type { Scrubber } from "./scrub.js";

export function mapUpstreamStatus(status: number): ErrorType {
  if (status === 400 || status === 422) return "invalid_request";
  if (status === 404) return "not_found";
  if (status === 413) return "payload_too_large";
  return "provider_error";
}

const MAX_MESSAGE = 2_000;

export function upstreamErrorMessage(status: number, bodyText: string, scrubber: Scrubber): string {
  let message = "";
  try {
    const parsed = JSON.parse(bodyText) as { error?: { message?: unknown } | string; message?: unknown };
    const candidate = typeof parsed.error === "object" ? parsed.error?.message : (parsed.error ?? parsed.message);
    if (typeof candidate === "string") message = candidate;
  } catch {
    message = "";
  }
  if (status === 401 || status === 403) return "The upstream provider rejected the gateway's credentials for this model; contact the gateway operator.";
  const detail = message ? scrubber.scrubText(message.slice(0, MAX_MESSAGE)) : `status ${status}`;
  return `Upstream error: ${detail}`;
}

export function upstreamError(status: number, bodyText: string, scrubber: Scrubber): GatewayError {
  return new GatewayError(mapUpstreamStatus(status), upstreamErrorMessage(status, bodyText, scrubber), { code: `upstream_${status}` });
}
