// Upstream HTTP: undici Agents with keep-alive pools per origin, one per provider (upstream-pools.ts:
// HTTP/2 where offered, sized pools, a bounded and counted wait for a connection), and one for
// requests that name no provider. Distinguishes "no HTTP response" (failover material) from an
// answer with a status, and both from a request that found no free connection in time.
import { createRequire } from "node:module";
import type { Readable } from "node:stream";
import type * as Undici from "undici";
import type { ProviderConfig } from "../core/catalog.js";
import type { Cancellation } from "../core/cancellation.js";
import { closeProviderPools, poolFor } from "./upstream-pools.js";
import { ConnectionWaitTimeoutError, NoResponseError } from "./upstream-errors.js";

export { ConnectionWaitTimeoutError, NoResponseError };

/** A request to one upstream, addressed and authenticated with one key. */
export interface UpstreamRequest {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface UpstreamHttpRequest {
  url: string;
  method: "GET" | "POST" | "DELETE";
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Cancels the request: an AbortSignal, or the chat path's cheaper Cancellation. */
  signal: AbortSignal | Cancellation;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  /** The provider whose pool carries the request; absent: the shared agent. */
  provider?: ProviderConfig;
}

export interface UpstreamHttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable & { text(): Promise<string>; dump(): Promise<void> };
}

export class ClientAbortedError extends Error {
  override name = "ClientAbortedError";
}

let upstreamClient: { undici: typeof Undici; agent: Undici.Agent; errors: typeof Undici.errors } | undefined;

/**
 * The Agent, made with the first upstream request: undici (110 modules, ~150 ms of CPU on a busy
 * 2-core VM) is loaded then rather than before the gateway answers /healthz, and never by one that only
 * serves the demo upstream (docs/decisions/0031-load-what-a-command-needs.md). Synchronously (undici
 * is CommonJS, which is what `import` loaded too): the request path awaits nothing more for it.
 */
function client(): { undici: typeof Undici; agent: Undici.Agent; errors: typeof Undici.errors } {
  if (!upstreamClient) {
    const undici = createRequire(import.meta.url)("undici") as typeof Undici;
    const agent = new undici.Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 1_024, connect: { timeout: 10_000 } });
    upstreamClient = { undici, agent, errors: undici.errors };
  }
  return upstreamClient;
}

/**
 * Upstream URLs split into origin and path as undici's request(url) splits them (WHATWG URL), and
 * remembered: the agent gets the parts directly, without that parse and the option copies around
 * it. Measured through this function against a local server, 16 requests in flight: 52.5 against
 * 42.8 us of CPU per request and answer. A chat route sends to a handful of URLs (provider times
 * route); per-task URLs (videos) come and go, so the memory is bounded and starts over when full.
 */
const splitUrls = new Map<string, { origin: string; path: string } | null>();
const SPLIT_URLS_MAX = 512;

/** The origin and path (with the query) of an http(s) URL; null for anything else. */
export function splitUpstreamUrl(url: string): { origin: string; path: string } | null {
  let split = splitUrls.get(url);
  if (split !== undefined) return split;
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  split = parsed && (parsed.protocol === "http:" || parsed.protocol === "https:") ? { origin: parsed.origin, path: parsed.pathname + parsed.search } : null;
  if (splitUrls.size >= SPLIT_URLS_MAX) splitUrls.clear();
  splitUrls.set(url, split);
  return split;
}

export async function sendUpstream(req: UpstreamHttpRequest): Promise<UpstreamHttpResponse> {
  const split = splitUpstreamUrl(req.url);
  if (!split) throw new NoResponseError("not an http(s) URL");
  const { undici, agent } = client();
  const dispatcher = req.provider === undefined ? agent : poolFor(undici, req.provider);
  try {
    // An object literal, not a spread of shared options: the spread cost as much as the URL parse saved.
    const response = await dispatcher.request({
      origin: split.origin,
      path: split.path,
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
      headersTimeout: req.headersTimeoutMs,
      bodyTimeout: req.bodyTimeoutMs,
      // Safe to share an HTTP/2 connection with other requests: undici sends a non-idempotent request
      // (any POST) on an HTTP/2 connection only when nothing else runs there. undici never retries it.
      idempotent: true,
    });
    return { status: response.statusCode, headers: response.headers, body: response.body };
  } catch (error) {
    if (req.signal.aborted) throw new ClientAbortedError("the client went away");
    if (error instanceof ConnectionWaitTimeoutError) throw error;
    throw new NoResponseError(describeNetworkError(error));
  }
}

/** One request with the provider's timeouts (an object literal, as sendUpstream's own, not a spread). */
export function sendToProvider(provider: ProviderConfig, request: UpstreamRequest, signal: AbortSignal | Cancellation): Promise<UpstreamHttpResponse> {
  return sendUpstream({
    url: request.url,
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal,
    headersTimeoutMs: Math.min(provider.timeoutMs, 300_000),
    bodyTimeoutMs: provider.timeoutMs,
    provider,
  });
}

function describeNetworkError(error: unknown): string {
  const errors = upstreamClient?.errors;
  if (errors && error instanceof errors.HeadersTimeoutError) return "timeout before headers";
  if (errors && error instanceof errors.ConnectTimeoutError) return "connect timeout";
  const code = (error as { code?: string; cause?: { code?: string } })?.cause?.code ?? (error as { code?: string })?.code;
  return code ? code.toLowerCase() : "network error";
}

export async function closeUpstreamAgent(): Promise<void> {
  await Promise.all([upstreamClient?.agent.close(), closeProviderPools()]);
}

/** Reads a whole upstream body up to a limit; null when it is larger (the rest is discarded). */
export async function readBounded(body: AsyncIterable<Buffer>, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > maxBytes) return null;
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}
