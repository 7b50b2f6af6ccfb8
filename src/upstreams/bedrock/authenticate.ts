// AWS Signature Version 4 (service "bedrock") over the exact bytes sent, with the AWS SDK's own
// signer. The signer adds x-amz-date, x-amz-security-token (temporary credentials) and authorization.
// The SDK is loaded at the first request signed (sdk.ts).
import { GatewayError } from "../../errors/catalogue.js";
import type { SignRequest } from "../descriptor.js";
import { parseAwsKey } from "./credentials.js";
import { signerSdk } from "./sdk.js";

export const BEDROCK_SIGNING_SERVICE = "bedrock";

export const signBedrockRequest: SignRequest = async (request, key, _clientHeaders, provider) => {
  if (provider.region === undefined) throw new GatewayError("provider_error", `The provider ${provider.name} has no region to sign for.`);
  const { SignatureV4, Sha256 } = signerSdk();
  const signer = new SignatureV4({ service: BEDROCK_SIGNING_SERVICE, region: provider.region, credentials: parseAwsKey(key), sha256: Sha256 });
  const url = new URL(request.url);
  // host is signed, so it is set here as undici will send it (with the port when not the default).
  const headers: Record<string, string> = { ...request.headers, host: url.host };
  const signed = await signer.sign({
    method: request.method,
    protocol: url.protocol,
    hostname: url.hostname,
    port: url.port ? Number(url.port) : undefined,
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    body: request.body,
  });
  for (const [name, value] of Object.entries(signed.headers)) if (name !== "host") request.headers[name] = value;
};
