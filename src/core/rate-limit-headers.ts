// The rate-limit response headers of the gateway's own limits (traffic-limits.ts): OpenAI's
// x-ratelimit-* names on every model response, Anthropic's anthropic-ratelimit-* names too on
// /v1/messages, for the tightest limit's figures after an admission or as a refusal judged them.

/** The tightest limit's figures for the response headers: the requests and the tokens each from the scope with the least left. */
export interface TrafficStatus {
  requests: WindowFigures | null;
  tokens: WindowFigures | null;
}

export interface WindowFigures {
  limit: number;
  remaining: number;
  /** Milliseconds until the window ends. */
  resetMs: number;
}

/** A duration as OpenAI writes x-ratelimit-reset-*: "250ms", "1s", "12.5s", "1m0s". */
export function openAiDuration(ms: number): string {
  const whole = Math.max(0, Math.ceil(ms));
  if (whole < 1000) return `${whole}ms`;
  const minutes = Math.floor(whole / 60_000);
  const millis = whole % 1000;
  const seconds = Math.floor((whole % 60_000) / 1000);
  // The fraction without trailing zeros: .5, .25, .125 (on every response, so no toFixed and regex).
  const fraction =
    millis === 0 ? "" : millis % 100 === 0 ? `.${millis / 100}` : millis % 10 === 0 ? `.${String(millis / 10).padStart(2, "0")}` : `.${String(millis).padStart(3, "0")}`;
  return minutes > 0 ? `${minutes}m${seconds}${fraction}s` : `${seconds}${fraction}s`;
}

/** The header names of one figure, written out once (not built per response: the request path sends them on every admitted request). */
interface FigureHeaderNames {
  limit: string;
  remaining: string;
  reset: string;
  anthropicLimit: string;
  anthropicRemaining: string;
  anthropicReset: string;
}

const headerNamesOf = (name: "requests" | "tokens"): FigureHeaderNames => ({
  limit: `x-ratelimit-limit-${name}`,
  remaining: `x-ratelimit-remaining-${name}`,
  reset: `x-ratelimit-reset-${name}`,
  anthropicLimit: `anthropic-ratelimit-${name}-limit`,
  anthropicRemaining: `anthropic-ratelimit-${name}-remaining`,
  anthropicReset: `anthropic-ratelimit-${name}-reset`,
});
const REQUEST_HEADERS = headerNamesOf("requests");
const TOKEN_HEADERS = headerNamesOf("tokens");

/** The response headers for a status: OpenAI's names always, Anthropic's too on /v1/messages; nothing for a figure without a limit. */
export function rateLimitHeaders(status: TrafficStatus, now: number, anthropic: boolean): Record<string, string> {
  const headers: Record<string, string> = {};
  if (status.requests) putFigureHeaders(headers, REQUEST_HEADERS, status.requests, now, anthropic);
  if (status.tokens) putFigureHeaders(headers, TOKEN_HEADERS, status.tokens, now, anthropic);
  return headers;
}

function putFigureHeaders(headers: Record<string, string>, names: FigureHeaderNames, figures: WindowFigures, now: number, anthropic: boolean): void {
  const limit = String(figures.limit);
  const remaining = String(figures.remaining);
  headers[names.limit] = limit;
  headers[names.remaining] = remaining;
  headers[names.reset] = openAiDuration(figures.resetMs);
  if (anthropic) {
    headers[names.anthropicLimit] = limit;
    headers[names.anthropicRemaining] = remaining;
    // RFC 3339, whole seconds rounded up: the window has surely ended by then.
    headers[names.anthropicReset] = new Date(Math.ceil((now + figures.resetMs) / 1000) * 1000).toISOString().replace(".000Z", "Z");
  }
}
