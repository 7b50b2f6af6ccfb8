// An upstream answer other than 2xx or 429 is returned to the client, mapped to a catalogue type and
// with the upstream's message scrubbed. Upstream credential errors are the operator's problem, not
// the client's, so they never surface as the client's auth_error.
// Google APIs answer with a google.rpc.Status body ({"error":{"code","message","status","details"}})
// whose status names the cause more precisely than the HTTP code: an invalid API key is a 400
// INVALID_ARGUMENT with the reason API_KEY_INVALID, and FAILED_PRECONDITION (a region or billing not
// enabled) is the provider account's problem, not the request's.
import { GatewayError, type ErrorType } from "../errors/catalogue.js";
import type { Scrubber } from "./scrub.js";

export function mapUpstreamStatus(status: number): ErrorType {
  if (status === 400 || status === 422) return "invalid_request";
  if (status === 404) return "not_found";
  if (status === 413) return "payload_too_large";
  return "provider_error";
}

const MAX_MESSAGE = 2_000;

const CREDENTIAL_STATUSES = new Set(["UNAUTHENTICATED", "PERMISSION_DENIED"]);
const CREDENTIAL_REASONS = new Set(["API_KEY_INVALID", "API_KEY_EXPIRED"]);
const CREDENTIAL_MESSAGE = "The upstream provider rejected the gateway's credentials for this model; contact the gateway operator.";

interface ParsedError {
  message: string;
  /** The google.rpc.Status status, when the body is one. */
  rpcStatus: string;
  /** The ErrorInfo reasons in its details. */
  reasons: string[];
}

function parseErrorBody(bodyText: string): ParsedError {
  const parsed: ParsedError = { message: "", rpcStatus: "", reasons: [] };
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return parsed;
  }
  if (typeof body !== "object" || body === null) return parsed;
  const { error, message } = body as { error?: unknown; message?: unknown };
  if (typeof error === "object" && error !== null) {
    const { message: inner, status, details } = error as { message?: unknown; status?: unknown; details?: unknown };
    if (typeof inner === "string") parsed.message = inner;
    if (typeof status === "string") parsed.rpcStatus = status;
    if (Array.isArray(details)) {
      for (const detail of details as unknown[]) {
        const reason = typeof detail === "object" && detail !== null ? (detail as { reason?: unknown }).reason : undefined;
        if (typeof reason === "string") parsed.reasons.push(reason);
      }
    }
  } else if (typeof error === "string") parsed.message = error;
  else if (typeof message === "string") parsed.message = message;
  return parsed;
}

function isCredentialError(status: number, parsed: ParsedError): boolean {
  return status === 401 || status === 403 || CREDENTIAL_STATUSES.has(parsed.rpcStatus) || parsed.reasons.some((reason) => CREDENTIAL_REASONS.has(reason));
}

export function upstreamErrorMessage(status: number, bodyText: string, scrubber: Scrubber): string {
  const parsed = parseErrorBody(bodyText);
  if (isCredentialError(status, parsed)) return CREDENTIAL_MESSAGE;
  const detail = parsed.message ? scrubber.scrubText(parsed.message.slice(0, MAX_MESSAGE)) : `status ${status}`;
  return `Upstream error: ${detail}`;
}

export function upstreamError(status: number, bodyText: string, scrubber: Scrubber): GatewayError {
  const parsed = parseErrorBody(bodyText);
  const type = isCredentialError(status, parsed) || parsed.rpcStatus === "FAILED_PRECONDITION" ? "provider_error" : mapUpstreamStatus(status);
  // The upstream's own words may quote the prompt: the request log keeps only its status.
  const logMessage = `The upstream answered HTTP ${status}; its message is not kept in the request log.`;
  return new GatewayError(type, upstreamErrorMessage(status, bodyText, scrubber), { code: `upstream_${status}`, logMessage });
}
