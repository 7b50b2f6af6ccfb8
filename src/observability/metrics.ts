// Prometheus metrics (docs/operations.md#metrics, decision 0018). One registry per gateway (not
// prom-client's global one, so that tests and several apps in one process stay apart). Recorded at
// three places only: the end of every request (observeRequest, from the one log line's hook in
// http/server.ts), each upstream attempt (forward.ts) and each billing batch (the SQLite writer and
// the PostgreSQL batcher); gauges of state the gateway already keeps (breakers, cooldowns, holds,
// settlement retries) are read when scraped, so the request path pays nothing for them.
// The per-request series are kept here, not in prom-client's Counter and Histogram: those hash and
// validate every label set on each inc/observe (33 us per request for this set, measured with
// tsx on the 2-core VM), where one Map lookup by a joined key and a few additions cost about 1 us.
// They are aggregated into the exposed label sets only when scraped (custom registry metrics).
// Labels are bounded: route patterns (not URLs), configured model and provider names, HTTP status,
// token types. No key or account id unless metrics.account_series is on, and then at most
// max_accounts accounts get their own series; the rest share account="_other".
import { Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { Usage } from "../core/usage.js";
import { genAiOperation, genAiProvider } from "./gen-ai.js";
import { GuardrailMetrics } from "./guardrail-metrics.js";
import { Buckets, family, groupBy, histogramValues, type Labels } from "./metric-families.js";

export interface MetricsSettings {
  /** The bearer token GET /metrics on the main listener requires; null: not served there. */
  token: string | null;
  /** A separate listener that serves only /metrics (without a token unless `token` is set). */
  listen: { host: string; port: number } | null;
  /** Per-account series (opt-in): at most this many accounts; null when off. */
  accountSeriesMax: number | null;
}

/** What the scrape reads from the rest of the gateway: state kept anyway, read only when scraped. */
export interface MetricsSources {
  breakerStates(): Record<"closed" | "open" | "half_open", number>;
  keysCoolingDown(): number;
  settlementRetriesPending(): number;
  /** Upstream requests waiting for a connection now, by provider (upstreams/upstream-pools.ts). */
  upstreamRequestsWaiting(): ReadonlyMap<string, number>;
  holdsOutstanding(): Promise<number>;
  /** Request log entries dropped because the database did not keep up (absent: no request log). */
  requestLogDropped?: () => number;
  /** The response cache's counts in this process (hits, misses, stores, evictions, errors, too_large). */
  responseCacheEvents?: () => Record<string, number>;
}

/** What one finished request contributes (from request.meter, see pipeline/request-context.ts). */
export interface FinishedRequest {
  route: string;
  status: number;
  seconds: number;
  model: string | undefined;
  provider: string | undefined;
  /** The provider's type (openai, anthropic, ...): the gen_ai_provider_name label. */
  providerType: string | undefined;
  accountId: string | undefined;
  usage: Usage | undefined;
  costNano: bigint | undefined;
  /** Upstream attempts across keys and deployments (request.meter.attempts). */
  attempts: number | undefined;
  /** Seconds from the request's start to the first byte of a stream; undefined for others. */
  firstByteSeconds: number | undefined;
}

export type AttemptResult = "success" | "rate_limited" | "no_response" | "client_error" | "server_error";

const OTHER_ACCOUNTS = "_other";

/** gen_ai.client.token.usage's bucket boundaries, as the GenAI semantic conventions give them. */
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const TTFT_BUCKETS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];
const BATCH_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** Everything recorded for one (route, model, provider, status). */
interface RequestSeries {
  route: string;
  model: string;
  provider: string;
  providerType: string | undefined;
  status: string;
  requests: number;
  duration: Buckets;
  ttft: Buckets | null;
  tokens: { input: number; cached_input: number; cache_write: number; output: number; reasoning: number };
  inputUsage: Buckets | null;
  outputUsage: Buckets | null;
  costNano: bigint;
  failovers: number;
}

const TOKEN_TYPES = ["input", "cached_input", "cache_write", "output", "reasoning"] as const;

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly settings: MetricsSettings;
  readonly #series = new Map<string, RequestSeries>();
  readonly #attempts = new Map<string, { provider: string; result: AttemptResult; count: number }>();
  readonly #batches = new Map<string, Buckets>();
  readonly #accounts = new Map<string, { statuses: Map<string, number>; costNano: bigint }>();
  readonly guardrails = new GuardrailMetrics();

  /** Under `serve --workers N`: the whole server's exposition, through the cluster primary (cluster-metrics.ts). */
  readonly #exposeAll: (() => Promise<string>) | null;

  constructor(settings: MetricsSettings, sources: MetricsSources, exposeAll?: () => Promise<string>) {
    this.settings = settings;
    this.#exposeAll = exposeAll ?? null;
    const registry = this.registry;
    const registers = [registry];
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
    const series = () => this.#series.values();
    this.guardrails.register(registry);

    family(registry, "gateway_requests_total", "Requests answered, by route pattern, model, provider and HTTP status (499: the client went away).", "counter", () =>
      [...series()].map((s) => ({ labels: { route: s.route, model: s.model, provider: s.provider, status: s.status }, value: s.requests })),
    );
    family(registry, "gateway_request_duration_seconds", "Time from a request's arrival to its last byte, by route pattern, model and provider.", "histogram", () =>
      groupBy(
        series(),
        (s) => `${s.route}\u0000${s.model}\u0000${s.provider}`,
        (s) => ({ labels: { route: s.route, model: s.model, provider: s.provider }, b: new Buckets(DURATION_BUCKETS) }),
        (acc, s) => acc.b.add(s.duration),
      ).flatMap((g) => histogramValues("gateway_request_duration_seconds", g.labels, g.b)),
    );
    const genLabels = (s: RequestSeries): Labels => ({
      gen_ai_operation_name: genAiOperation(s.route),
      gen_ai_provider_name: genAiProvider(s.providerType),
      gen_ai_request_model: s.model,
    });
    family(
      registry,
      "gen_ai_server_time_to_first_token_seconds",
      "Time from a stream request's arrival to its first byte sent to the client (GenAI gen_ai.server.time_to_first_token).",
      "histogram",
      () =>
        groupBy(
          series(),
          (s) => (s.ttft === null ? null : JSON.stringify(genLabels(s))),
          (s) => ({ labels: genLabels(s), b: new Buckets(TTFT_BUCKETS) }),
          (acc, s) => acc.b.add(s.ttft!),
        ).flatMap((g) => histogramValues("gen_ai_server_time_to_first_token_seconds", g.labels, g.b)),
    );
    family(registry, "gen_ai_client_token_usage", "Input and output tokens per upstream call (GenAI gen_ai.client.token.usage).", "histogram", () =>
      (["input", "output"] as const).flatMap((type) =>
        groupBy(
          series(),
          (s) => ((type === "input" ? s.inputUsage : s.outputUsage) === null ? null : JSON.stringify(genLabels(s))),
          (s) => ({ labels: { ...genLabels(s), gen_ai_token_type: type }, b: new Buckets(TOKEN_BUCKETS) }),
          (acc, s) => acc.b.add((type === "input" ? s.inputUsage : s.outputUsage)!),
        ).flatMap((g) => histogramValues("gen_ai_client_token_usage", g.labels, g.b)),
      ),
    );
    const byModel = <A>(start: (s: RequestSeries) => A, into: (acc: A, s: RequestSeries) => void) => groupBy(series(), (s) => `${s.model}\u0000${s.provider}`, start, into);
    family(
      registry,
      "gateway_tokens_total",
      "Tokens metered, by model, provider and type (input includes cached_input and cache_write; output includes reasoning).",
      "counter",
      () =>
        byModel(
          (s) => ({ model: s.model, provider: s.provider, tokens: { input: 0, cached_input: 0, cache_write: 0, output: 0, reasoning: 0 }, metered: false }),
          (acc, s) => {
            for (const type of TOKEN_TYPES) acc.tokens[type] += s.tokens[type];
            acc.metered ||= s.inputUsage !== null;
          },
        ).flatMap((g) => (g.metered ? TOKEN_TYPES.map((type) => ({ labels: { model: g.model, provider: g.provider, type }, value: g.tokens[type] })) : [])),
    );
    family(registry, "gateway_cost_nano_usd_total", "Cost charged, in nano-USD (1e-9 USD; exact while below 2^53, about 9 million USD per series).", "counter", () =>
      byModel(
        (s) => ({ model: s.model, provider: s.provider, cost: 0n, charged: false }),
        (acc, s) => {
          acc.cost += s.costNano;
          acc.charged ||= s.inputUsage !== null;
        },
      )
        .filter((g) => g.charged)
        .map((g) => ({ labels: { model: g.model, provider: g.provider }, value: Number(g.cost) })),
    );
    family(
      registry,
      "gateway_upstream_failovers_total",
      "Moves to another upstream key or deployment after a failed attempt (429 or no response), by the provider of the request's answer.",
      "counter",
      () =>
        groupBy(
          series(),
          (s) => (s.failovers === 0 ? null : s.provider),
          (s) => ({ provider: s.provider, n: 0 }),
          (acc, s) => (acc.n += s.failovers),
        ).map((g) => ({ labels: { provider: g.provider }, value: g.n })),
    );
    const attempts = () => [...this.#attempts.values()];
    family(
      registry,
      "gateway_upstream_attempts_total",
      "Upstream attempts, by provider and result (success, rate_limited, no_response, client_error, server_error).",
      "counter",
      () => attempts().map((a) => ({ labels: { provider: a.provider, result: a.result }, value: a.count })),
    );
    const rateLimited = () =>
      attempts()
        .filter((a) => a.result === "rate_limited")
        .map((a) => ({ labels: { provider: a.provider }, value: a.count }));
    family(registry, "gateway_upstream_rate_limited_total", "Upstream 429 answers, by provider.", "counter", rateLimited);
    family(registry, "gateway_upstream_key_cooldowns_total", "Upstream key cooldowns started (each 429 starts one), by provider.", "counter", rateLimited);
    family(registry, "gateway_db_batch_duration_seconds", "Time of one billing write batch (admissions, settlements, releases committed together), by database.", "histogram", () =>
      [...this.#batches].flatMap(([dialect, b]) => histogramValues("gateway_db_batch_duration_seconds", { dialect }, b)),
    );
    new Gauge({
      name: "gateway_upstream_keys_cooling_down",
      help: "Upstream keys in a 429 cooldown now (this process).",
      registers,
      collect() {
        this.set(sources.keysCoolingDown());
      },
    });
    new Gauge({
      name: "gateway_circuit_breakers",
      help: "Circuit breakers (upstream keys and routing deployments) known to this process, by state.",
      labelNames: ["state"],
      registers,
      collect() {
        const counts = sources.breakerStates();
        for (const state of ["closed", "open", "half_open"] as const) this.set({ state }, counts[state]);
      },
    });
    new Gauge({
      name: "gateway_holds_outstanding",
      help: "Billing holds not yet settled or released (the whole database, every process).",
      registers,
      // Every worker reads the same table: across workers it is taken once, not summed.
      aggregator: "first",
      async collect() {
        this.set(await sources.holdsOutstanding());
      },
    });
    const waiting = () => [...sources.upstreamRequestsWaiting()].map(([provider, value]) => ({ labels: { provider }, value }));
    family(registry, "gateway_upstream_requests_waiting", "Upstream requests waiting for a connection of their provider's pool now (this process).", "gauge", waiting);
    new Gauge({
      name: "gateway_settlement_retries_pending",
      help: "Stream settlements that failed and are being retried in the background (this process).",
      registers,
      collect() {
        this.set(sources.settlementRetriesPending());
      },
    });
    const requestLogDropped = sources.requestLogDropped;
    if (requestLogDropped !== undefined) {
      family(registry, "gateway_request_log_dropped_total", "Request log entries dropped because the database did not keep up with them (this process).", "counter", () => [
        { labels: {}, value: requestLogDropped() },
      ]);
    }
    const cacheEvents = sources.responseCacheEvents;
    const cacheHelp = "Response cache lookups, stores, evictions and backend errors (this process; ADR 0044).";
    if (cacheEvents)
      family(registry, "gateway_response_cache_events_total", cacheHelp, "counter", () => Object.entries(cacheEvents()).map(([event, value]) => ({ labels: { event }, value })));
    if (settings.accountSeriesMax !== null) {
      const cap = `at most ${settings.accountSeriesMax} accounts, the rest as account="${OTHER_ACCOUNTS}"`;
      family(registry, "gateway_account_requests_total", `Requests per account and HTTP status (opt-in; ${cap}).`, "counter", () =>
        [...this.#accounts].flatMap(([account, a]) => [...a.statuses].map(([status, n]) => ({ labels: { account, status }, value: n }))),
      );
      family(registry, "gateway_account_cost_nano_usd_total", `Cost charged per account in nano-USD (opt-in; ${cap}).`, "counter", () =>
        [...this.#accounts].map(([account, a]) => ({ labels: { account }, value: Number(a.costNano) })),
      );
    }
  }

  observeRequest(r: FinishedRequest): void {
    const model = r.model ?? "";
    const provider = r.provider ?? "";
    const key = `${r.route}\u0000${model}\u0000${provider}\u0000${r.status}`;
    let s = this.#series.get(key);
    if (s === undefined) {
      s = {
        route: r.route,
        model,
        provider,
        providerType: r.providerType,
        status: String(r.status),
        requests: 0,
        duration: new Buckets(DURATION_BUCKETS),
        ttft: null,
        tokens: { input: 0, cached_input: 0, cache_write: 0, output: 0, reasoning: 0 },
        inputUsage: null,
        outputUsage: null,
        costNano: 0n,
        failovers: 0,
      };
      this.#series.set(key, s);
    }
    s.requests += 1;
    s.duration.observe(r.seconds);
    if (r.firstByteSeconds !== undefined && r.model !== undefined) (s.ttft ??= new Buckets(TTFT_BUCKETS)).observe(r.firstByteSeconds);
    const u = r.usage;
    if (u) {
      const t = s.tokens;
      t.input += u.inputTokens;
      t.cached_input += u.cachedInputTokens;
      t.cache_write += (u.cacheWrite5mTokens ?? 0) + (u.cacheWrite1hTokens ?? 0);
      t.output += u.outputTokens;
      t.reasoning += u.reasoningTokens;
      (s.inputUsage ??= new Buckets(TOKEN_BUCKETS)).observe(u.inputTokens);
      (s.outputUsage ??= new Buckets(TOKEN_BUCKETS)).observe(u.outputTokens);
    }
    if (r.costNano !== undefined) s.costNano += r.costNano;
    // Each attempt after the first followed a failed one (a 429, no response): a move to another key or deployment.
    if (r.attempts !== undefined && r.attempts > 1) s.failovers += r.attempts - 1;
    if (this.settings.accountSeriesMax !== null && r.accountId !== undefined) {
      const a = this.#account(r.accountId);
      a.statuses.set(s.status, (a.statuses.get(s.status) ?? 0) + 1);
      if (r.costNano !== undefined) a.costNano += r.costNano;
    }
  }

  /** One upstream attempt's result. */
  observeAttempt(provider: string, result: AttemptResult): void {
    const key = `${provider}\u0000${result}`;
    const a = this.#attempts.get(key);
    if (a === undefined) this.#attempts.set(key, { provider, result, count: 1 });
    else a.count += 1;
  }

  observeBatch(dialect: "sqlite" | "postgres", seconds: number): void {
    let b = this.#batches.get(dialect);
    if (b === undefined) this.#batches.set(dialect, (b = new Buckets(BATCH_BUCKETS)));
    b.observe(seconds);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition a scrape gets: this process's, or under cluster workers every worker's together. */
  expose(): Promise<string> {
    return this.#exposeAll ? this.#exposeAll() : this.registry.metrics();
  }

  /** The account's series; past max_accounts named accounts, the shared one. */
  #account(accountId: string): { statuses: Map<string, number>; costNano: bigint } {
    let a = this.#accounts.get(accountId);
    if (a !== undefined) return a;
    const named = this.#accounts.size - (this.#accounts.has(OTHER_ACCOUNTS) ? 1 : 0);
    const id = named < this.settings.accountSeriesMax! ? accountId : OTHER_ACCOUNTS;
    a = this.#accounts.get(id);
    if (a === undefined) this.#accounts.set(id, (a = { statuses: new Map(), costNano: 0n }));
    return a;
  }
}
