import { describe, expect, it } from "vitest";
import type { ModelConfig } from "../core/catalog.js";
import type { Headroom } from "./admission.js";
import { coveredOutputTokens } from "./clamping.js";
import { projectCost } from "./pricing.js";
import type { AdmissionRequest } from "./types.js";

function model(inputPerMtok: bigint, outputPerMtok: bigint): ModelConfig {
  return {
    id: "m",
    kind: "chat",
    provider: { name: "p" },
    upstreamModel: "m",
    contextWindow: null,
    maxOutputTokens: null,
    defaultOutputTokens: 1000,
    modalities: { input: ["text"], output: ["text"] },
    pricing: {
      inputPerMtok,
      cachedInputPerMtok: 0n,
      cacheWrite5mPerMtok: inputPerMtok,
      cacheWrite1hPerMtok: inputPerMtok,
      outputPerMtok,
      webSearchPerCall: 0n,
      perRequest: 0n,
      perImage: new Map(),
      perVideoSecond: 0n,
    },
    tiers: [],
  } as unknown as ModelConfig;
}

const SONNET = model(3_000_000_000n, 15_000_000_000n); // $3 / $15 per million tokens
const DEAR = model(3_000_000_000n, 30_000_000_000n);
// A tenth of a nano per output token: the hold rounds up, so only a scan finds the exact answer.
const TINY = model(7n, 100n * 1_000_000n + 7n);

function request(prompt: number, output: number, m: ModelConfig = SONNET): AdmissionRequest {
  return { requestId: "r", accountId: "a", keyId: "k", model: m, route: "chat", projectedInputTokens: prompt, projectedOutputTokens: output };
}

function room(balance: bigint, extra: Partial<Headroom> = {}): Headroom {
  return { balance, monthCost: null, monthTokens: null, keyCost: null, keyTokens: null, periodCost: null, periodTokens: null, budgetCost: null, budgetTokens: null, ...extra };
}

/** The oracle: the largest count up to `output` whose projected cost fits, by scanning every count. */
function scan(prompt: number, output: number, m: ModelConfig, costRoom: bigint): number {
  let best = -1;
  for (let n = 0; n <= output; n++) if (projectCost(request(prompt, n, m)) <= costRoom) best = n;
  return best;
}

describe("coveredOutputTokens", () => {
  it("the largest output the balance covers after the prompt: $0.05 at $3/$15 covers 3,332 tokens after 5", () => {
    expect(coveredOutputTokens(request(5, 32_000), [SONNET], room(50_000_000n))).toBe(3_332);
  });

  it("agrees with a scan of every count, rounding included", () => {
    for (const balance of [0n, 1n, 99n, 1_000n, 12_345n, 123_456n]) {
      for (const m of [SONNET, TINY]) expect({ balance, n: coveredOutputTokens(request(7, 2_000, m), [m], room(balance)) }).toEqual({ balance, n: scan(7, 2_000, m, balance) });
    }
  });

  it("never more than asked for, and -1 when not even the prompt fits", () => {
    expect(coveredOutputTokens(request(5, 100), [SONNET], room(10_000_000_000n))).toBe(100);
    expect(coveredOutputTokens(request(5, 100), [SONNET], room(14_999n))).toBe(-1);
    expect(coveredOutputTokens(request(5, 100), [SONNET], room(-1n))).toBe(-1);
    expect(coveredOutputTokens(request(5, 100), [SONNET], room(10_000_000_000n, { keyTokens: 4n }))).toBe(-1);
  });

  it("the tightest of every money and token limit decides", () => {
    const big = 10_000_000_000n;
    expect(coveredOutputTokens(request(5, 32_000), [SONNET], room(big, { keyCost: 20_000_000n, monthCost: 30_000_000n }))).toBe(1_332);
    expect(coveredOutputTokens(request(5, 32_000), [SONNET], room(big, { monthCost: 15_000_000n + 15_000n }))).toBe(1_000);
    expect(coveredOutputTokens(request(5, 32_000), [SONNET], room(big, { keyTokens: 1_000n, monthTokens: 2_000n }))).toBe(995);
    expect(coveredOutputTokens(request(5, 32_000), [SONNET], room(big, { monthTokens: 705n, keyCost: big }))).toBe(700);
  });

  it("a routing group: covered at every deployment's price, so the dearest decides", () => {
    expect(coveredOutputTokens(request(5, 32_000), [SONNET, DEAR], room(50_000_000n))).toBe(1_666);
    expect(coveredOutputTokens(request(5, 32_000), [DEAR, SONNET], room(50_000_000n))).toBe(1_666);
  });
});
