// Stage: forward. Sends a request upstream with failover across keys: the one implementation, for
// every paid route (chat, images, video submits). A 429 cools its key down and moves on, keeping
// the upstream's Retry-After; no HTTP response moves on; any other answer ends the loop. A
// streaming request only counts as answered once its first body bytes arrived, so a connection
// that dies before anything reached the client still fails over to the next key.
// All keys 429 -> 429 rate_limit_error with the upstream's Retry-After; all without a response ->
// 502 provider_error; a mix of both -> 429 (retrying later can succeed once the limits reset).
// Keys whose circuit breaker is open are skipped (src/upstreams/circuit-breaker.ts); every key open -> 502
// provider_error at once, with a Retry-After until the first breaker lets a trial through.
import type { ProviderConfig } from "../core/catalog.js";
import type { Cancellation } from "../core/cancellation.js";
import { GatewayError } from "../errors/catalogue.js";
import { ConnectionWaitTimeoutError, NoResponseError, sendToProvider, type UpstreamHttpResponse, type UpstreamRequest } from "../upstreams/upstream-client.js";
import { readFirstChunk } from "./relay.js";
import { scrubberForResponse } from "./response-scrubber.js";
import type { Scrubber } from "./scrub.js";
import type { PipelineServices } from "./services.js";
import type { Outcome } from "../upstreams/upstream-health.js";
import { upstreamOf } from "../upstreams/registry.js";
import type { AttemptResult } from "../observability/metrics.js";
import { CLIENT_SPAN_KIND, endSpan, type RequestTrace } from "../observability/spans.js";
import type { Span } from "@opentelemetry/api";

export interface ForwardRequest {
  /** The request as sent with one upstream key (called once per attempt; a signature is made per attempt). */
  build: (key: string) => UpstreamRequest | Promise<UpstreamRequest>;
  /** A stream: answered only once its first body bytes arrived (see Forwarded.firstChunk). */
  awaitFirstChunk: boolean;
  signal: AbortSignal | Cancellation;
  /** Called before each attempt with the attempt's number. */
  onAttempt: (attempts: number) => void;
  /** The request's span when tracing is on: each attempt is a child span, and its traceparent goes upstream. */
  trace?: RequestTrace | undefined;
}

export interface Forwarded {
  response: UpstreamHttpResponse;
  /** For a 2xx answer to a stream: the first chunk, already read from response.body (null: it ended empty). */
  firstChunk: Buffer | null | undefined;
  /** The key that answered (a video task keeps polling with it). */
  key: string;
  attempts: number;
  /** The scrubber for this account and answer: it also knows the account's own keys and the ids in the answer's headers. */
  scrubber: Scrubber;
}

export type ForwardServices = Pick<PipelineServices, "rotation" | "upstreamKeys" | "scrubber" | "health"> & Partial<Pick<PipelineServices, "metrics" | "refusedKeys">>;

export async function forward(services: ForwardServices, accountId: string, provider: ProviderConfig, request: ForwardRequest): Promise<Forwarded> {
  const found = await services.upstreamKeys.keysFor(accountId, provider);
  const { scope, scrubber } = found;
  // Only the provider's shared keys are disabled when refused; an account's own keys are its own.
  const shared = scope === provider.name;
  const refusedKeys = shared ? services.refusedKeys : undefined;
  const keys = refusedKeys ? refusedKeys.usable(found.keys) : found.keys;
  if (keys.length === 0) throw new GatewayError("provider_error", found.keys.length === 0 ? "No upstream key is configured or enabled for this provider." : NO_WORKING_KEY);
  const { rotation, health } = services;
  const order = rotation.order(scope, keys);
  if (order.length === 0) {
    throw new GatewayError("rate_limit_error", undefined, { headers: { "retry-after": String(rotation.secondsUntilReady(keys)) } });
  }
  const { signal, trace } = request;
  const metrics = services.metrics ?? null;
  // HTTP, or the upstream type's in-process transport (the demo type).
  const send = upstreamOf(provider).transport ?? sendToProvider;
  let rateLimited = 0;
  let refused = 0;
  let retryAfter: string | null = null;
  let lastNetworkReason = "";
  let attempts = 0;
  const openScopes: string[] = [];
  for (const key of order) {
    const keyScope = health.scopeOfKey(provider.name, key);
    const upstream = health.pass(keyScope);
    if (!upstream) {
      openScopes.push(keyScope);
      continue;
    }
    attempts += 1;
    let outcome: Outcome = "neutral";
    request.onAttempt(attempts);
    let response: UpstreamHttpResponse;
    let firstChunk: Buffer | null | undefined;
    let result: AttemptResult | undefined;
    let status: number | undefined;
    const span: Span | undefined =
      trace === undefined
        ? undefined
        : trace.tracing.child(trace, "gateway.upstream_attempt", { "gateway.provider": provider.name, "gateway.attempt": attempts }, CLIENT_SPAN_KIND);
    try {
      const built = await request.build(key);
      if (span !== undefined) trace!.tracing.inject(span, built.headers);
      response = await send(provider, built, signal);
      status = response.status;
      result = response.status === 429 ? "rate_limited" : response.status >= 500 ? "server_error" : response.status >= 400 ? "client_error" : "success";
      if (response.status === 429) {
        const header = response.headers["retry-after"];
        const keyRetryAfter = typeof header === "string" ? header : null;
        await response.body.dump().catch(() => undefined);
        rateLimited += 1;
        retryAfter = keyRetryAfter ?? retryAfter;
        rotation.coolDown(key, keyRetryAfter);
        continue;
      }
      // A shared key the upstream refuses is disabled and the next one tried: the client's request
      // is not at fault, and the key would fail every request until an operator replaces it.
      if ((response.status === 401 || response.status === 403) && refusedKeys?.refuse(provider.name, key, response.status)) {
        await response.body.dump().catch(() => undefined);
        refused += 1;
        continue;
      }
      if (request.awaitFirstChunk && response.status >= 200 && response.status < 300) {
        try {
          firstChunk = await readFirstChunk(response.body);
        } catch (error) {
          if (signal.aborted) throw error;
          result = "no_response";
          throw new NoResponseError("connection lost before the first byte");
        }
      }
      // A 4xx other than 429 is the client's request, not the upstream's health.
      outcome = response.status >= 500 ? "failure" : response.status < 400 ? "success" : "neutral";
    } catch (error) {
      // The gateway's own pool had no connection for it in time: another key of this provider waits
      // in the same pool, and the upstream's health is not in question (ADR 0043).
      if (error instanceof ConnectionWaitTimeoutError) {
        throw new GatewayError("provider_error", `No connection to the upstream provider was free within ${error.waitedMs} ms; try again later.`, {
          code: "upstream_connection_wait_timeout",
          headers: { "retry-after": "1" },
        });
      }
      if (error instanceof NoResponseError) {
        result = "no_response";
        if (!signal.aborted) outcome = "failure";
        lastNetworkReason = error.reason;
        continue;
      }
      throw error;
    } finally {
      health.settle(upstream, outcome);
      // What the Upstreams page shows as the key's last error (only on an error: off the common path).
      if (result === "rate_limited") health.noteError(keyScope, "HTTP 429 (rate limited)", rotation.cooldownEnd(key));
      else if (result === "server_error") health.noteError(keyScope, `HTTP ${status}`);
      else if (result === "client_error" && (status === 401 || status === 403) && refusedKeys) health.noteError(keyScope, `HTTP ${status} (key refused: disabled)`);
      else if (result === "no_response" && !signal.aborted) health.noteError(keyScope, `no response: ${lastNetworkReason || "connection lost before the first byte"}`);
      if (metrics !== null && result !== undefined) metrics.observeAttempt(provider.name, result);
      if (span !== undefined) endAttemptSpan(span, result, status);
    }
    rotation.succeeded(key);
    return { response, firstChunk, key, attempts, scrubber: scrubberForResponse(scrubber ?? services.scrubber, response.headers) };
  }
  if (rateLimited > 0) {
    const headers: Record<string, string> = {};
    if (retryAfter) headers["retry-after"] = retryAfter;
    throw new GatewayError("rate_limit_error", undefined, { headers });
  }
  if (refused > 0 && refused === attempts) throw new GatewayError("provider_error", NO_WORKING_KEY);
  if (attempts === 0) {
    const retry = String(health.secondsUntilTrial(openScopes));
    throw new GatewayError("provider_error", "Every upstream key of this provider is failing; try again later.", { headers: { "retry-after": retry } });
  }
  throw new GatewayError("provider_error", `The upstream provider could not be reached (${lastNetworkReason}).`);
}

const NO_WORKING_KEY = "The upstream refused every key of this provider; an administrator must replace or enable them.";

/** The attempt's status and result on its span (no URL, host or key: docs/security.md). */
function endAttemptSpan(span: Span, result: AttemptResult | undefined, status: number | undefined): void {
  const attributes: Record<string, string | number> = { "gateway.attempt.result": result ?? "aborted" };
  if (status !== undefined) attributes["http.response.status_code"] = status;
  endSpan(span, attributes, result === "success" || result === "client_error" ? undefined : (result ?? "aborted"));
}
