// Every error type of the contract (docs/api-contract.md) with its HTTP status, and how each route family renders it.
// Handlers throw GatewayError; the HTTP layer renders it once, in the route's native shape.

export const ERROR_CATALOGUE = {
  auth_error: { status: 401, message: "Missing, malformed or unknown API key." },
  invalid_request: { status: 400, message: "The request is malformed or has an invalid parameter." },
  not_supported: { status: 400, message: "The model is not included in this key's tier." },
  guardrail_blocked: { status: 400, message: "A guardrail blocked the request." },
  forbidden: { status: 403, message: "Your role in this workspace does not allow this action; ask an owner or admin." },
  unauthenticated: { status: 401, message: "Sign in first." },
  workspace_write_failed: { status: 500, message: "The workspace change could not be saved; nothing was changed. Safe to retry." },
  invite_used: { status: 404, message: "This invite was already accepted." },
  invite_expired: { status: 404, message: "This invite has expired." },
  already_member: { status: 404, message: "You are already a member of this workspace." },
  not_found: { status: 404, message: "Not found." },
  payload_too_large: { status: 413, message: "The request body exceeds the size limit." },
  rate_limit_error: { status: 429, message: "Every upstream key is rate limited; retry later." },
  provider_error: { status: 502, message: "The upstream provider could not be reached." },
  quota_exceeded: { status: 402, message: "The account's budget or balance does not cover this request." },
  account_suspended: { status: 402, message: "The account is suspended or closed." },
  account_not_found: { status: 400, message: "The referenced account does not exist." },
  sub_key_limit_reached: { status: 400, message: "The account already has 50 enabled keys." },
  balance_invariant: { status: 400, message: "The change would put the balance outside 0.00 to 1,000,000.00 or move total spend backwards or past its maximum." },
  key_budget_exceeded: { status: 402, message: "This request would exceed the key's budget cap." },
  key_token_cap_exceeded: { status: 402, message: "This request would exceed the key's token cap." },
  workspace_budget_exceeded: { status: 402, message: "This request would exceed the workspace's monthly budget." },
  member_budget_exceeded: { status: 402, message: "This request would exceed your monthly budget in this workspace." },
  tag_budget_exceeded: { status: 402, message: "This request would exceed the monthly budget on one of its tags." },
  ledger_write_failed: { status: 502, message: "The usage could not be recorded; nothing was charged." },
  ledger_retention_violation: { status: 409, message: "Ledger rows are kept for 365 days after they are written." },
  key_show_expired: { status: 410, message: "The show-again window has passed or the token is not valid for this key. Revoke the key and create a new one." },
  password_link_invalid: {
    status: 410,
    message: "This set-password link cannot be used: it was used already, it expired, or a newer link replaced it. Ask an administrator for a new one.",
  },
  code_not_redeemable: { status: 400, message: "The code is not one this gateway issued, or it is used, revoked or expired." },
  invalid_state: { status: 409, message: "The resource's state does not allow this operation." },
  conflict: { status: 409, message: "This state transition is not allowed." },
  config_reload_refused: { status: 422, message: "The config file was not reloaded; the running config stays." },
  internal_error: { status: 500, message: "Internal error." },
  service_unavailable: { status: 503, message: "The gateway cannot reach its database right now; nothing was charged. Retry shortly." },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorType = keyof typeof ERROR_CATALOGUE;

export interface ErrorDetails {
  /** The request field the error is about, for invalid_request. */
  param?: string;
  /** A more specific machine-readable code than the type. */
  code?: string;
  /** Headers the response must carry, e.g. Retry-After. */
  headers?: Record<string, string>;
  /** Every problem found, when there are several (a catalog document): rendered as error.errors. */
  errors?: ReadonlyArray<{ field: string; message: string }>;
  /**
   * What the request log keeps instead of the message, when the message may quote the request's own
   * text or an upstream's answer (which may quote the prompt): the request log never holds either.
   */
  logMessage?: string;
}

/** The message the request log keeps for an error: its logMessage when it has one, else its message. */
export function loggableMessage(error: GatewayError): string {
  return error.details.logMessage ?? error.message;
}

export class GatewayError extends Error {
  readonly status: number;
  constructor(
    readonly type: ErrorType,
    message?: string,
    readonly details: ErrorDetails = {},
  ) {
    super(message ?? ERROR_CATALOGUE[type].message);
    this.name = "GatewayError";
    this.status = ERROR_CATALOGUE[type].status;
  }
}

export function invalidRequest(param: string, message: string): GatewayError {
  return new GatewayError("invalid_request", message, { param });
}

/** Wire shapes: OpenAI for /v1 routes and the dashboard, Anthropic for /v1/messages, Google's for /v1beta (Gemini). */
export type ErrorShape = "openai" | "anthropic" | "google";

/**
 * google.rpc.Code names by HTTP status, as Google's APIs pair them (the gateway's own error type
 * travels in the ErrorInfo detail: see renderGoogleError).
 */
const GOOGLE_STATUS: Readonly<Record<number, string>> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  402: "RESOURCE_EXHAUSTED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  409: "ABORTED",
  410: "NOT_FOUND",
  413: "INVALID_ARGUMENT",
  422: "FAILED_PRECONDITION",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  502: "UNAVAILABLE",
  503: "UNAVAILABLE",
};

export function googleStatusOf(httpStatus: number): string {
  return GOOGLE_STATUS[httpStatus] ?? (httpStatus >= 500 ? "INTERNAL" : "UNKNOWN");
}

/**
 * Google's error body (google.rpc.Status): `code` the HTTP status, `status` its google.rpc.Code
 * name, and one google.rpc.ErrorInfo detail whose `reason` is the gateway's error type in Google's
 * UPPER_SNAKE form and whose metadata holds the type as the other envelopes spell it, the field
 * (param) and the request id. Also sent in-band as a stream's last element.
 */
export function renderGoogleError(type: string, status: number, message: string, metadata: Record<string, string>): object {
  return {
    error: {
      code: status,
      message,
      status: googleStatusOf(status),
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: type.toUpperCase(), domain: "model-gateway", metadata: { type, ...metadata } }],
    },
  };
}

/** Google's error object for a stream that fails after it started: its status from the type (502 for an upstream's own type). */
export function googleStreamError(type: string, message: string): object {
  const known = Object.hasOwn(ERROR_CATALOGUE, type) ? ERROR_CATALOGUE[type as ErrorType].status : 502;
  return renderGoogleError(type, known, message, {});
}

export function renderError(error: GatewayError, shape: ErrorShape, requestId: string): object {
  if (shape === "google") {
    const metadata: Record<string, string> = { request_id: requestId };
    if (error.details.param !== undefined) metadata.param = error.details.param;
    if (error.details.code !== undefined) metadata.code = error.details.code;
    return renderGoogleError(error.type, error.status, error.message, metadata);
  }
  if (shape === "anthropic") {
    return { type: "error", error: { type: error.type, message: error.message }, request_id: requestId };
  }
  return {
    error: {
      message: error.message,
      type: error.type,
      param: error.details.param ?? null,
      code: error.details.code ?? error.type,
      ...(error.details.errors && { errors: error.details.errors }),
    },
    request_id: requestId,
  };
}

/** 402 for a key whose account is not active: what state it is in, and who can change that. */
export function accountSuspended(status: string): GatewayError {
  return new GatewayError(
    "account_suspended",
    `The account is ${status}: its keys make no requests until an administrator of this gateway reactivates it (dashboard administration, the admin API or gateway admin accounts set-status).`,
  );
}
