// Stage: forward. Sends the plan's request upstream with failover across keys. A streaming
// request only counts as answered once its first body bytes arrived, so a connection that dies
// before anything reached the client still fails over to the next key.
import type { ModelConfig } from "../config/load.js";
import type { Cancellation } from "../core/cancellation.js";
import { adapterFor } from "../providers/index.js";
import { NoResponseError, sendUpstream, type UpstreamHttpResponse } from "../providers/upstream-client.js";
import { withFailover, type AttemptOutcome } from "./failover.js";
import type { UpstreamPlan } from "./plan.js";
import { readFirstChunk } from "./relay.js";
import type { Scrubber } from "./scrub.js";
import type { PipelineServices } from "./services.js";

export interface Forwarded {
  response: UpstreamHttpResponse;
  /** For a 2xx stream: the first chunk, already read from response.body (null: it ended empty). */
  firstChunk?: Buffer | null;
  key: string;
  attempts: number;
  /** The scrubber for this account: the shared one, or one that also knows its own keys. */
  scrubber: Scrubber;
}

export async function forward(
  services: PipelineServices,
  accountId: string,
  model: ModelConfig,
  plan: UpstreamPlan,
  clientHeaders: Record<string, string | string[] | undefined>,
  signal: Cancellation,
  onAttempt: (attempts: number) => void,
): Promise<Forwarded> {
  const provider = model.provider;
  const adapter = adapterFor(provider.type);
  const { keys, scope, scrubber } = await services.upstreamKeys.keysFor(accountId, provider);
  const body = JSON.stringify(plan.body);

  const result = await withFailover(
    services.rotation,
    scope,
    keys,
    async (key): Promise<AttemptOutcome<Omit<Forwarded, "key" | "attempts" | "scrubber">>> => {
      const target = adapter.target(provider, plan.path, key, clientHeaders);
      const response = await sendUpstream({
        url: target.url,
        method: "POST",
        headers: target.headers,
        body,
        signal,
        headersTimeoutMs: Math.min(provider.timeoutMs, 300_000),
        bodyTimeoutMs: provider.timeoutMs,
      });
      if (response.status === 429) {
        const retryAfter = response.headers["retry-after"];
        await response.body.dump().catch(() => undefined);
        return { kind: "rate_limited", retryAfter: typeof retryAfter === "string" ? retryAfter : null };
      }
      if (!plan.stream || response.status < 200 || response.status >= 300) return { kind: "ok", value: { response } };
      try {
        return { kind: "ok", value: { response, firstChunk: await readFirstChunk(response.body) } };
      } catch (error) {
        if (signal.aborted) throw error;
        throw new NoResponseError("connection lost before the first byte");
      }
    },
    onAttempt,
  );
  return { ...result.value, key: result.key, attempts: result.attempts, scrubber: scrubber ?? services.scrubber };
}
