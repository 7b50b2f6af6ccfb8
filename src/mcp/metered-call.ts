// One MCP call (tools/call, prompts/get, resources/read) as the gateway meters and records it: a
// priced tools/call is admitted first (a hold of the server's price_per_call_usd, refused like any
// request the balance or budgets cannot cover), settled when the tool answered without an error and
// released otherwise (nothing charged for an error). A free call on an account without balance is
// refused too. Every call is admitted under the key's and the account's rate and concurrency limits
// (their tier's defaults or their own; not the per-model ones: an MCP call names no model), through
// billing's admission like a model request, so the count is exact across processes: a free call
// takes a hold of nothing when a limit applies, released when the call ends, which leaves no ledger
// row. Every call is one request log entry: server, tool or prompt, status, latency and cost; never
// its arguments or its result.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Hold } from "../billing/types.js";
import type { StoreBilling } from "../billing/billing-store.js";
import { budgetLimitsOf } from "../core/budget-scopes.js";
import type { ModelConfig } from "../core/catalog.js";
import type { TrafficLimit } from "../core/traffic-limits.js";
import { DIMENSIONS, type DimensionPriceField } from "../core/dimensions.js";
import { newRequestId } from "../core/ids.js";
import type { Nano } from "../core/money.js";
import { ZERO_USAGE } from "../core/usage.js";
import { ERROR_CATALOGUE, GatewayError, loggableMessage } from "../errors/catalogue.js";
import type { GatewayConfig } from "../config/load.js";
import type { Principal } from "../pipeline/auth-cache.js";
import { trafficLimitsFor } from "../pipeline/traffic.js";
import type { RequestLog } from "../requestlog/request-log.js";

export type McpMethod = "tools/call" | "prompts/get" | "resources/read";

export interface CallRecord {
  method: McpMethod;
  server: string;
  /** The tool's or prompt's own name; null for a resource (its URI is not kept). */
  name: string | null;
  /** The name the client used (server__tool); null for a resource. */
  presented: string | null;
}

export interface CallServices {
  billing: StoreBilling;
  requestLog: RequestLog | null;
  /** The running config's tier limits (read per call: a reload applies to the next call). */
  config: Pick<GatewayConfig, "tierLimits">;
}

/** What a call ended with, for its request log entry. */
interface Outcome {
  status: number;
  errorType: string | null;
  errorMessage: string | null;
  costNano: bigint | null;
}

/**
 * Runs `call` metered and recorded. `price`: nano-USD per successful call, null for a free one.
 * `failed(result)`: true for a result that is an error (a tool's isError), which is not charged.
 */
export async function meteredCall<T>(
  services: CallServices,
  principal: Principal,
  record: CallRecord,
  price: Nano | null,
  call: () => Promise<T>,
  failed: (result: T) => boolean,
): Promise<T> {
  const startedAt = performance.now();
  const requestId = newRequestId();
  const finish = (outcome: Outcome): void => {
    services.requestLog?.append({
      createdAt: Math.round(performance.timeOrigin + startedAt),
      requestId,
      accountId: principal.account.id,
      keyId: principal.key.id,
      method: "MCP",
      route: `mcp/${record.method}`,
      model: record.name,
      provider: record.server,
      deployment: null,
      status: outcome.status,
      errorType: outcome.errorType,
      errorMessage: outcome.errorMessage,
      requestedModel: record.presented,
      latencyUs: Math.round((performance.now() - startedAt) * 1000),
      firstByteUs: null,
      attempts: null,
      inputTokens: null,
      cachedTokens: null,
      outputTokens: null,
      reasoningTokens: null,
      costNano: outcome.costNano,
      estimated: null,
    });
  };
  let hold: Hold | null = null;
  const charged = price !== null && record.method === "tools/call";
  const limits = mcpTrafficLimits(services.config, principal);
  const admission = {
    requestId,
    accountId: principal.account.id,
    keyId: principal.key.id,
    route: "mcp" as const,
    projectedInputTokens: 0,
    projectedOutputTokens: 0,
    ...(limits.length > 0 && { limits }),
  };
  try {
    if (charged) {
      hold = await services.billing.admit({
        ...admission,
        model: pricedModel(record.server, record.presented ?? record.server, price),
        ...(principal.workspace != null && { budgets: budgetLimitsOf(principal.workspace, principal.account.id) }),
      });
    } else if (principal.account.balance <= 0n) {
      throw new GatewayError("quota_exceeded", "The account has no balance left; MCP calls are refused until it is topped up.");
    } else if (limits.length > 0) {
      hold = await services.billing.admit({ ...admission, model: pricedModel(record.server, record.presented ?? record.server, 0n) });
    }
  } catch (error) {
    const refusal = error instanceof GatewayError ? error : new GatewayError("internal_error", "The call could not be admitted.");
    finish({ status: refusal.status, errorType: refusal.type, errorMessage: loggableMessage(refusal), costNano: null });
    const retryAfter = refusal.details.headers?.["retry-after"];
    throw new McpError(ErrorCode.InvalidRequest, refusal.message, {
      type: refusal.type,
      ...(refusal.details.code !== undefined && { code: refusal.details.code }),
      ...(retryAfter !== undefined && { retry_after_seconds: Number(retryAfter) }),
    });
  }
  let result: T;
  try {
    result = await call();
  } catch (error) {
    if (hold !== null) await services.billing.release(hold).catch(() => undefined);
    const timedOut = error instanceof McpError && /did not answer within/.test(error.message);
    finish({
      status: timedOut ? 504 : 502,
      errorType: "provider_error",
      errorMessage: error instanceof McpError ? error.message.slice(0, 300) : ERROR_CATALOGUE.provider_error.message,
      costNano: null,
    });
    throw error;
  }
  if (failed(result)) {
    if (hold !== null) await services.billing.release(hold).catch(() => undefined);
    finish({ status: 200, errorType: "tool_error", errorMessage: "The tool answered with an error result; nothing was charged.", costNano: null });
    return result;
  }
  let cost: bigint | null = null;
  // A free call's hold only counted it against the traffic limits: released, nothing on the ledger.
  if (hold !== null && !charged) await services.billing.release(hold).catch(() => undefined);
  else if (hold !== null) {
    try {
      cost = (await services.billing.settle(hold, ZERO_USAGE, `mcp:${record.server}`)).cost;
    } catch (error) {
      const refusal = error instanceof GatewayError ? error : new GatewayError("ledger_write_failed", ERROR_CATALOGUE.ledger_write_failed.message);
      finish({ status: refusal.status, errorType: refusal.type, errorMessage: loggableMessage(refusal), costNano: null });
      throw new McpError(ErrorCode.InternalError, refusal.message, { type: refusal.type });
    }
  }
  finish({ status: 200, errorType: null, errorMessage: null, costNano: cost });
  return result;
}

/**
 * The key's and the account's rate and concurrency limits for an MCP call: those of no model (the
 * empty id names none), so per-model limits never apply to MCP calls. Tokens are counted as 0.
 */
function mcpTrafficLimits(config: Pick<GatewayConfig, "tierLimits">, principal: Principal): readonly TrafficLimit[] {
  const all = trafficLimitsFor(config, principal, "");
  let limits = subjectLimits.get(all);
  // One list per principal's list, like trafficLimitsFor's: admission-postgres.ts builds its field once per list.
  if (limits === undefined) subjectLimits.set(all, (limits = all.filter((limit) => limit.subject === "key" || limit.subject === "account")));
  return limits;
}
const subjectLimits = new WeakMap<readonly TrafficLimit[], readonly TrafficLimit[]>();

/** A priced call as billing sees it: a "model" named after the tool whose only price is per request. */
function pricedModel(server: string, presented: string, price: Nano): ModelConfig {
  const pricing = Object.fromEntries(DIMENSIONS.flatMap((d) => (d.priceField === null ? [] : [[d.priceField, 0n]]))) as Record<DimensionPriceField, Nano>;
  return {
    id: presented,
    kind: "chat",
    provider: {
      name: `mcp:${server}`,
      type: "openai",
      baseUrl: `mcp:${server}`,
      sharedKeys: [],
      apis: new Set(),
      headers: {},
      timeoutMs: 0,
      connectTimeoutMs: 0,
      maxConnections: 1,
      connectionWaitMs: 0,
      http2: false,
    },
    upstreamModel: presented,
    contextWindow: null,
    maxOutputTokens: null,
    defaultOutputTokens: 0,
    modalities: { input: ["text"], output: ["text"] },
    pricing: { ...pricing, perRequest: price, perImage: new Map() },
    tiers: [],
  };
}
