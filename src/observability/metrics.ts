// Prometheus metrics (docs/operations.md#metrics, decision 0018). One registry per gateway (not
// prom-client's global one, so that tests and several apps in one process stay apart). Recorded at
// three places only: the end of every request (observeRequest, from the one log line's hook in
// http/server.ts), each upstream attempt (forward.ts) and each billing batch (the SQLite writer and
// the PostgreSQL batcher); gauges of state the gateway already keeps (breakers, cooldowns, holds,
// settlement retries) are read when scraped, so the request path pays nothing for them.
// Labels are bounded: route patterns (not URLs), configured model and provider names, HTTP status,
// token types. No key or account id unless metrics.account_series is on, and then at most
// max_accounts accounts get their own series; the rest share account="_other".
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Usage } from "../core/usage.js";

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
  holdsOutstanding(): Promise<number>;
}

/** What one finished request contributes (from request.meter, see http/request-context.ts). */
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

/** The GenAI semantic conventions' gen_ai.provider.name for each upstream type. */
const GEN_AI_PROVIDER: Record<string, string> = {
  openai: "openai",
  anthropic: "anthropic",
  "azure-openai": "azure.ai.openai",
  bedrock: "aws.bedrock",
  gemini: "gcp.gemini",
  "google-operations": "gcp.vertex_ai",
};

/** gen_ai.operation.name of a route (the conventions' names where one exists). */
export function genAiOperation(route: string): string {
  if (route.startsWith("/v1/embeddings")) return "embeddings";
  if (route.startsWith("/v1/images")) return "generate_content";
  if (route.startsWith("/v1/videos")) return "generate_content";
  return "chat";
}

export function genAiProvider(type: string | undefined): string {
  return type === undefined ? "" : (GEN_AI_PROVIDER[type] ?? type);
}

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly settings: MetricsSettings;
  readonly #requests: Counter<"route" | "model" | "provider" | "status">;
  readonly #duration: Histogram<"route" | "model" | "provider">;
  readonly #ttft: Histogram<"gen_ai_operation_name" | "gen_ai_provider_name" | "gen_ai_request_model">;
  readonly #tokenUsage: Histogram<"gen_ai_operation_name" | "gen_ai_provider_name" | "gen_ai_request_model" | "gen_ai_token_type">;
  readonly #tokens: Counter<"model" | "provider" | "type">;
  readonly #cost: Counter<"model" | "provider">;
  readonly #attempts: Counter<"provider" | "result">;
  readonly #failovers: Counter<"provider">;
  readonly #rateLimited: Counter<"provider">;
  readonly #cooldowns: Counter<"provider">;
  readonly #batch: Histogram<"dialect">;
  readonly #accountRequests: Counter<"account" | "status"> | null = null;
  readonly #accountCost: Counter<"account"> | null = null;
  readonly #accounts = new Set<string>();

  constructor(settings: MetricsSettings, sources: MetricsSources) {
    this.settings = settings;
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
    this.#requests = new Counter({
      name: "gateway_requests_total",
      help: "Requests answered, by route pattern, model, provider and HTTP status (499: the client went away).",
      labelNames: ["route", "model", "provider", "status"],
      registers,
    });
    this.#duration = new Histogram({
      name: "gateway_request_duration_seconds",
      help: "Time from a request's arrival to its last byte, by route pattern, model and provider.",
      labelNames: ["route", "model", "provider"],
      buckets: DURATION_BUCKETS,
      registers,
    });
    this.#ttft = new Histogram({
      name: "gen_ai_server_time_to_first_token_seconds",
      help: "Time from a stream request's arrival to its first byte sent to the client (GenAI gen_ai.server.time_to_first_token).",
      labelNames: ["gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model"],
      buckets: TTFT_BUCKETS,
      registers,
    });
    this.#tokenUsage = new Histogram({
      name: "gen_ai_client_token_usage",
      help: "Input and output tokens per upstream call (GenAI gen_ai.client.token.usage).",
      labelNames: ["gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_request_model", "gen_ai_token_type"],
      buckets: TOKEN_BUCKETS,
      registers,
    });
    this.#tokens = new Counter({
      name: "gateway_tokens_total",
      help: "Tokens metered, by model, provider and type (input includes cached_input and cache_write; output includes reasoning).",
      labelNames: ["model", "provider", "type"],
      registers,
    });
    this.#cost = new Counter({
      name: "gateway_cost_nano_usd_total",
      help: "Cost charged, in nano-USD (1e-9 USD; exact while below 2^53, about 9 million USD per series).",
      labelNames: ["model", "provider"],
      registers,
    });
    this.#attempts = new Counter({
      name: "gateway_upstream_attempts_total",
      help: "Upstream attempts, by provider and result (success, rate_limited, no_response, client_error, server_error).",
      labelNames: ["provider", "result"],
      registers,
    });
    this.#failovers = new Counter({
      name: "gateway_upstream_failovers_total",
      help: "Moves to another upstream key or deployment after a failed attempt (429 or no response), by the provider of the request's answer.",
      labelNames: ["provider"],
      registers,
    });
    this.#rateLimited = new Counter({
      name: "gateway_upstream_rate_limited_total",
      help: "Upstream 429 answers, by provider.",
      labelNames: ["provider"],
      registers,
    });
    this.#cooldowns = new Counter({
      name: "gateway_upstream_key_cooldowns_total",
      help: "Upstream key cooldowns started (after a 429), by provider.",
      labelNames: ["provider"],
      registers,
    });
    this.#batch = new Histogram({
      name: "gateway_db_batch_duration_seconds",
      help: "Time of one billing write batch (admissions, settlements, releases committed together), by database.",
      labelNames: ["dialect"],
      buckets: BATCH_BUCKETS,
      registers,
    });
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
      async collect() {
        this.set(await sources.holdsOutstanding());
      },
    });
    new Gauge({
      name: "gateway_settlement_retries_pending",
      help: "Stream settlements that failed and are being retried in the background (this process).",
      registers,
      collect() {
        this.set(sources.settlementRetriesPending());
      },
    });
    if (settings.accountSeriesMax !== null) {
      this.#accountRequests = new Counter({
        name: "gateway_account_requests_total",
        help: `Requests per account and HTTP status (opt-in; at most ${settings.accountSeriesMax} accounts, the rest as account="${OTHER_ACCOUNTS}").`,
        labelNames: ["account", "status"],
        registers,
      });
      this.#accountCost = new Counter({
        name: "gateway_account_cost_nano_usd_total",
        help: `Cost charged per account in nano-USD (opt-in; at most ${settings.accountSeriesMax} accounts, the rest as account="${OTHER_ACCOUNTS}").`,
        labelNames: ["account"],
        registers,
      });
    }
  }

  observeRequest(r: FinishedRequest): void {
    const model = r.model ?? "";
    const provider = r.provider ?? "";
    const status = String(r.status);
    this.#requests.inc({ route: r.route, model, provider, status });
    this.#duration.observe({ route: r.route, model, provider }, r.seconds);
    const gen = r.model === undefined ? null : { gen_ai_operation_name: genAiOperation(r.route), gen_ai_provider_name: genAiProvider(r.providerType), gen_ai_request_model: model };
    if (gen && r.firstByteSeconds !== undefined) this.#ttft.observe(gen, r.firstByteSeconds);
    const u = r.usage;
    if (u) {
      const cacheWrite = (u.cacheWrite5mTokens ?? 0) + (u.cacheWrite1hTokens ?? 0);
      this.#tokens.inc({ model, provider, type: "input" }, u.inputTokens);
      if (u.cachedInputTokens > 0) this.#tokens.inc({ model, provider, type: "cached_input" }, u.cachedInputTokens);
      if (cacheWrite > 0) this.#tokens.inc({ model, provider, type: "cache_write" }, cacheWrite);
      this.#tokens.inc({ model, provider, type: "output" }, u.outputTokens);
      if (u.reasoningTokens > 0) this.#tokens.inc({ model, provider, type: "reasoning" }, u.reasoningTokens);
      if (gen) {
        this.#tokenUsage.observe({ ...gen, gen_ai_token_type: "input" }, u.inputTokens);
        this.#tokenUsage.observe({ ...gen, gen_ai_token_type: "output" }, u.outputTokens);
      }
    }
    // Each attempt after the first followed a failed one (a 429, no response): a move to another key or deployment.
    if (r.attempts !== undefined && r.attempts > 1) this.#failovers.inc({ provider }, r.attempts - 1);
    if (r.costNano !== undefined) this.#cost.inc({ model, provider }, Number(r.costNano));
    if (this.#accountRequests && r.accountId !== undefined) {
      const account = this.#accountLabel(r.accountId);
      this.#accountRequests.inc({ account, status });
      if (r.costNano !== undefined) this.#accountCost!.inc({ account }, Number(r.costNano));
    }
  }

  /** One upstream attempt's result. */
  observeAttempt(provider: string, result: AttemptResult): void {
    this.#attempts.inc({ provider, result });
    if (result === "rate_limited") {
      this.#rateLimited.inc({ provider });
      this.#cooldowns.inc({ provider });
    }
  }

  observeBatch(dialect: "sqlite" | "postgres", seconds: number): void {
    this.#batch.observe({ dialect }, seconds);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  expose(): Promise<string> {
    return this.registry.metrics();
  }

  #accountLabel(accountId: string): string {
    if (this.#accounts.has(accountId)) return accountId;
    if (this.#accounts.size >= this.settings.accountSeriesMax!) return OTHER_ACCOUNTS;
    this.#accounts.add(accountId);
    return accountId;
  }
}
