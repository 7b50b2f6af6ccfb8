// The billing contract the request pipeline calls: admit before forwarding (places a hold),
// settle after the upstream answered (one transaction: ledger row + every counter), or release.
import type { ModelConfig } from "../core/catalog.js";
import type { Nano } from "../core/money.js";
import type { Usage } from "../core/usage.js";
import type { TrafficStatus } from "../core/rate-limit-headers.js";
import type { TrafficLimit } from "../core/traffic-limits.js";
import type { DimensionProjectedField } from "../core/dimensions.js";
import type { BudgetLimit } from "../core/budget-scopes.js";

export type Route = "chat" | "responses" | "messages" | "generate_content" | "images" | "videos" | "embeddings" | "mcp";

/** A projected count per unit dimension that has one (core/dimensions.ts projectedField: images, video seconds), when the route has them. */
export type DimensionProjections = { [F in DimensionProjectedField]?: number };

export interface AdmissionRequest extends DimensionProjections {
  requestId: string;
  accountId: string;
  keyId: string;
  model: ModelConfig;
  route: Route;
  /** Tokens the request is expected to consume (core/dimensions.ts TOKEN_PARTS): prompt estimate + max output. */
  projectedInputTokens: number;
  projectedOutputTokens: number;
  /** Image pricing key, e.g. "1024x1024/hd". */
  imageVariant?: string;
  /** The rate and concurrency limits that apply (traffic-limits.ts, applicableLimits); absent or empty: none. */
  limits?: readonly TrafficLimit[];
  /** The budget scopes that apply (core/budget-scopes.ts: a workspace key's workspace and member budgets); absent or empty: none. */
  budgets?: readonly BudgetLimit[];
  /** The request's tags as "key=value" texts (core/request-tags.ts tagTexts), kept on the hold for its ledger row; absent or empty: none. */
  tags?: readonly string[];
}

export interface Hold {
  id: string;
  requestId: string;
  accountId: string;
  keyId: string;
  amount: Nano;
  tokens: number;
  model: ModelConfig;
  route: Route;
  imageVariant?: string;
  /**
   * The most its settlement may charge (nano-USD): set to the amount held for a clamped request, so
   * that output past the lowered limit (an upstream overshooting it) is never billed beyond the hold.
   */
  chargeCap?: Nano;
  /** Upstream attempts made for the request (failover included), recorded in its ledger row; unset: not counted. */
  attempts?: number;
  /** The tightest rate limits' figures after this admission (the x-ratelimit-* headers); unset: no limit applied. */
  traffic?: TrafficStatus;
  /** The budget scopes the hold reserved in (budget_usage); settlement charges them and a release gives them back. Unset: none. */
  budgets?: readonly string[];
  /** The request's tags ("key=value"), written to ledger_tags with the ledger row (migration 0030). Unset: none. */
  tags?: readonly string[];
}

export interface Charge {
  cost: Nano;
  /** False when the request id was already settled (idempotent replay). */
  recorded: boolean;
}

export interface AdmitOptions {
  /** How long the hold lives before the sweeper may release it; default 15 minutes. Video tasks, which settle late, pass more. */
  ttlMs?: number;
}

export interface Billing {
  /** Throws GatewayError quota_exceeded, key_budget_exceeded or key_token_cap_exceeded. */
  admit(request: AdmissionRequest, options?: AdmitOptions): Promise<Hold>;
  /** Throws GatewayError ledger_write_failed; nothing is changed then. */
  settle(hold: Hold, usage: Usage, provider: string): Promise<Charge>;
  /** Gives back a hold that will not be settled (failure before any delivery). */
  release(hold: Hold): Promise<void>;
}
