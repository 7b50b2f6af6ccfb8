// GatewayMetrics on its own: token types, cumulative histogram buckets, series folded into the
// exposed label sets, and the per-account cap, read back through the exposition parser.
import { describe, expect, it } from "vitest";
import { GatewayMetrics, type FinishedRequest } from "../../src/observability/metrics.js";
import { histogramOf, parseExposition, seriesOf, valueOf } from "../support/prometheus.js";

const sources = {
  breakerStates: () => ({ closed: 3, open: 1, half_open: 0 }),
  keysCoolingDown: () => 2,
  settlementRetriesPending: () => 1,
  holdsOutstanding: async () => 7,
  upstreamRequestsWaiting: () => new Map([["mockai", 2]]),
};
const base: FinishedRequest = {
  route: "/v1/messages",
  status: 200,
  seconds: 0.2,
  model: "claude-x",
  provider: "anth",
  providerType: "anthropic",
  accountId: "acc_1",
  attempts: 1,
  usage: { inputTokens: 1000, cachedInputTokens: 600, cacheWrite5mTokens: 100, cacheWrite1hTokens: 50, outputTokens: 300, reasoningTokens: 120, estimated: false },
  costNano: 123_456_789n,
  firstByteSeconds: undefined,
};

describe("GatewayMetrics", () => {
  it("exposes tokens by type, exact cost, histograms with cumulative buckets, and the scraped gauges", async () => {
    const metrics = new GatewayMetrics({ token: "t".repeat(16), listen: null, accountSeriesMax: null }, sources);
    metrics.observeRequest(base);
    metrics.observeRequest({ ...base, seconds: 3, firstByteSeconds: 0.05, attempts: 3 });
    metrics.observeRequest({ ...base, status: 502, seconds: 0.02, usage: undefined, costNano: undefined, attempts: 2 });
    metrics.observeAttempt("anth", "rate_limited");
    metrics.observeAttempt("anth", "no_response");
    metrics.observeAttempt("anth", "success");
    metrics.observeBatch("sqlite", 0.0004);
    metrics.observeBatch("sqlite", 0.02);
    const m = parseExposition(await metrics.expose());
    const mp = { model: "claude-x", provider: "anth" };
    expect(valueOf(m, "gateway_requests_total", { ...mp, status: "200" })).toBe(2);
    expect(valueOf(m, "gateway_requests_total", { ...mp, status: "502" })).toBe(1);
    expect(Object.fromEntries(seriesOf(m, "gateway_tokens_total").map((l) => [l.type, valueOf(m, "gateway_tokens_total", l)]))).toEqual({
      input: 2000,
      cached_input: 1200,
      cache_write: 300,
      output: 600,
      reasoning: 240,
    });
    expect(valueOf(m, "gateway_cost_nano_usd_total", mp)).toBe(246_913_578);
    // Duration: one series over both statuses; buckets are cumulative (0.02 and 0.2 by 0.25, 3 by 5).
    const duration = m.samples.filter((s) => s.name === "gateway_request_duration_seconds_bucket");
    expect(new Set(duration.map((s) => s.labels.route))).toEqual(new Set(["/v1/messages"]));
    expect(duration.find((s) => s.labels.le === "0.025")!.value).toBe(1);
    expect(duration.find((s) => s.labels.le === "0.25")!.value).toBe(2);
    expect(duration.find((s) => s.labels.le === "2.5")!.value).toBe(2);
    expect(duration.find((s) => s.labels.le === "5")!.value).toBe(3);
    expect(histogramOf(m, "gateway_request_duration_seconds")).toEqual({ count: 3, sum: 3.22 });
    const gen = { gen_ai_operation_name: "chat", gen_ai_provider_name: "anthropic", gen_ai_request_model: "claude-x" };
    expect(histogramOf(m, "gen_ai_server_time_to_first_token_seconds", gen)).toEqual({ count: 1, sum: 0.05 });
    expect(histogramOf(m, "gen_ai_client_token_usage", { ...gen, gen_ai_token_type: "input" })).toEqual({ count: 2, sum: 2000 });
    expect(valueOf(m, "gateway_upstream_failovers_total", { provider: "anth" })).toBe(3);
    expect(valueOf(m, "gateway_upstream_attempts_total", { provider: "anth" })).toBe(3);
    expect(valueOf(m, "gateway_upstream_rate_limited_total", { provider: "anth" })).toBe(1);
    expect(histogramOf(m, "gateway_db_batch_duration_seconds", { dialect: "sqlite" }).count).toBe(2);
    expect(valueOf(m, "gateway_circuit_breakers", { state: "open" })).toBe(1);
    expect(valueOf(m, "gateway_upstream_keys_cooling_down")).toBe(2);
    expect(valueOf(m, "gateway_settlement_retries_pending")).toBe(1);
    expect(valueOf(m, "gateway_holds_outstanding")).toBe(7);
    expect(valueOf(m, "gateway_upstream_requests_waiting", { provider: "mockai" })).toBe(2);
    expect(m.types.has("gateway_account_requests_total")).toBe(false);
  });

  it("caps per-account series at max_accounts, folding later accounts into _other", async () => {
    const metrics = new GatewayMetrics({ token: null, listen: { host: "127.0.0.1", port: 0 }, accountSeriesMax: 2 }, sources);
    for (const accountId of ["acc_a", "acc_b", "acc_c", "acc_d", "acc_a"]) metrics.observeRequest({ ...base, accountId, costNano: 5n });
    const m = parseExposition(await metrics.expose());
    expect(new Set(seriesOf(m, "gateway_account_requests_total").map((l) => l.account))).toEqual(new Set(["acc_a", "acc_b", "_other"]));
    expect(valueOf(m, "gateway_account_requests_total", { account: "acc_a" })).toBe(2);
    expect(valueOf(m, "gateway_account_requests_total", { account: "_other" })).toBe(2);
    expect(valueOf(m, "gateway_account_cost_nano_usd_total", { account: "_other" })).toBe(10);
  });
});
