// What bench/billing-pair.ts and the ledger-growth step share: the one-model config they bill against,
// and admission + settlement pairs run in lanes (the billing store alone, without HTTP).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { StoreBilling } from "../../src/billing/billing-store.js";
import type { TrafficLimit } from "../../src/core/traffic-limits.js";
import { loadConfig } from "../../src/config/load.js";
import { newRequestId } from "../../src/core/ids.js";

/** The model the pairs bill for, from a config written to `dir` (its provider is never called). */
export function pairModel(dir: string) {
  writeFileSync(
    join(dir, "gateway.config.yaml"),
    `
providers:
  mockai: { type: openai, base_url: "http://127.0.0.1:9/v1", keys: ["sk-unused"], apis: [chat] }
models:
  - id: pair-model
    kind: chat
    provider: mockai
    upstream_model: upstream
    default_output_tokens: 256
    pricing: { input_per_mtok: "1.00", cached_input_per_mtok: "0.50", output_per_mtok: "2.00" }
tiers:
  standard: { models: [pair-model] }
server:
  default_tier: standard
`,
  );
  return loadConfig({ GATEWAY_CONFIG: join(dir, "gateway.config.yaml"), GATEWAY_DATA_DIR: join(dir, "data") }, dir).models.get("pair-model")!;
}

export type PairModel = ReturnType<typeof pairModel>;

export interface PairSubject {
  billing: StoreBilling;
  accountId: string;
  keyId: string;
  model: PairModel;
  limits?: TrafficLimit[];
}

const USAGE = { inputTokens: 20, cachedInputTokens: 0, outputTokens: 9, reasoningTokens: 0, estimated: false };

/**
 * `count` admission + settlement pairs, `concurrency` in flight; `onPair` sees the running count. The
 * request ids are the gateway's own (time-ordered, core/ids.ts): random ones put the ledger's unique
 * request_id index inserts at random pages, which the gateway never does.
 */
export async function runPairs(subject: PairSubject, count: number, concurrency: number, onPair?: (done: number) => void): Promise<void> {
  const { billing, accountId, keyId, model, limits } = subject;
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next += 1;
      onPair?.(next);
      const hold = await billing.admit({ requestId: newRequestId(), accountId, keyId, model, route: "chat", projectedInputTokens: 20, projectedOutputTokens: 256, limits });
      await billing.settle(hold, USAGE, "mockai");
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
}

/** Microseconds of each pair's admission, settlement and both, for the pairs of runPairsAtRate. */
export interface PairTimes {
  admit: number[];
  settle: number[];
  pair: number[];
}

/**
 * `count` admission + settlement pairs started at `rate` per second whatever the earlier ones do (an
 * open loop, as the gateway sees requests at a fixed rate): each pair's admission and settlement times.
 */
export async function runPairsAtRate(subject: PairSubject, count: number, rate: number): Promise<PairTimes> {
  const { billing, accountId, keyId, model, limits } = subject;
  const times: PairTimes = { admit: [], settle: [], pair: [] };
  const pairs: Array<Promise<void>> = [];
  const began = performance.now();
  for (let i = 0; i < count; i++) {
    const wait = began + (i * 1000) / rate - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    pairs.push(
      (async () => {
        const started = performance.now();
        const hold = await billing.admit({ requestId: newRequestId(), accountId, keyId, model, route: "chat", projectedInputTokens: 20, projectedOutputTokens: 256, limits });
        const admitted = performance.now();
        await billing.settle(hold, USAGE, "mockai");
        const settled = performance.now();
        times.admit.push((admitted - started) * 1000);
        times.settle.push((settled - admitted) * 1000);
        times.pair.push((settled - started) * 1000);
      })(),
    );
  }
  await Promise.all(pairs);
  return times;
}
