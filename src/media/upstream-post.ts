// One upstream request of a media route, with the same failover as chat (failover.ts): a 429 or no
// HTTP response moves to the next key. The key that answered is returned, because a video task
// keeps polling with the key that created it.
import type { ProviderConfig } from "../config/load.js";
import { withFailover } from "../pipeline/failover.js";
import type { Scrubber } from "../pipeline/scrub.js";
import type { PipelineServices } from "../pipeline/services.js";
import { sendUpstream, type UpstreamHttpResponse } from "../providers/upstream-client.js";

export interface UpstreamRequest {
  url: string;
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface UpstreamAnswer {
  response: UpstreamHttpResponse;
  key: string;
  attempts: number;
  scrubber: Scrubber;
}

export async function callWithFailover(
  services: PipelineServices,
  accountId: string,
  provider: ProviderConfig,
  build: (key: string) => UpstreamRequest,
  signal: AbortSignal,
  onAttempt: (attempts: number) => void,
): Promise<UpstreamAnswer> {
  const { keys, scope, scrubber } = await services.upstreamKeys.keysFor(accountId, provider);
  const result = await withFailover(
    services.rotation,
    scope,
    keys,
    async (key) => {
      const response = await send(provider, build(key), signal);
      if (response.status === 429) {
        const retryAfter = response.headers["retry-after"];
        await response.body.dump().catch(() => undefined);
        return { kind: "rate_limited" as const, retryAfter: typeof retryAfter === "string" ? retryAfter : null };
      }
      return { kind: "ok" as const, value: response };
    },
    onAttempt,
  );
  return { response: result.value, key: result.key, attempts: result.attempts, scrubber: scrubber ?? services.scrubber };
}

/** One request with the provider's timeouts (no failover: polls and downloads use the task's key). */
export function send(provider: ProviderConfig, request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamHttpResponse> {
  return sendUpstream({
    ...request,
    signal,
    headersTimeoutMs: Math.min(provider.timeoutMs, 300_000),
    bodyTimeoutMs: provider.timeoutMs,
  });
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
