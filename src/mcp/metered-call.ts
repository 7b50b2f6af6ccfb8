// One MCP call (tools/call, prompts/get, resources/read) as the gateway meters and records it: a
// priced tools/call is admitted first (a hold of the server's price_per_call_usd, refused like any
// request the balance or budgets cannot cover), settled when the tool answered without an error and
// released otherwise (nothing charged for an error). A free call on an account without balance is
// refused too. Every call is one request log entry: server, tool or prompt, status, latency and cost;
// never its arguments or its result.
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Hold } from "../billing/types.js";
import type { StoreBilling } from "../billing/billing-store.js";
import { budgetLimitsOf } from "../core/budget-scopes.js";
import type { ModelConfig } from "../core/catalog.js";
import { DIMENSIONS, type DimensionPriceField } from "../core/dimensions.js";
import { newRequestId } from "../core/ids.js";
import type { Nano } from "../core/money.js";
import { ZERO_USAGE } from "../core/usage.js";
import { ERROR_CATALOGUE, GatewayError, loggableMessage } from "../errors/catalogue.js";
import type { Principal } from "../pipeline/auth-cache.js";
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
  try {
    if (price !== null && record.method === "tools/call") {
      hold = await services.billing.admit({
        requestId,
        accountId: principal.account.id,
        keyId: principal.key.id,
        model: pricedModel(record.server, record.presented ?? record.server, price),
        route: "mcp",
        projectedInputTokens: 0,
        projectedOutputTokens: 0,
        ...(principal.workspace != null && { budgets: budgetLimitsOf(principal.workspace, principal.account.id) }),
      });
    } else if (principal.account.balance <= 0n) {
      throw new GatewayError("quota_exceeded", "The account has no balance left; MCP calls are refused until it is topped up.");
    }
  } catch (error) {
    const refusal = error instanceof GatewayError ? error : new GatewayError("internal_error", "The call could not be admitted.");
    finish({ status: refusal.status, errorType: refusal.type, errorMessage: loggableMessage(refusal), costNano: null });
    throw new McpError(ErrorCode.InvalidRequest, refusal.message, { type: refusal.type, ...(refusal.details.code !== undefined && { code: refusal.details.code }) });
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
  if (hold !== null) {
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

/** A priced call as billing sees it: a "model" named after the tool whose only price is per request. */
function pricedModel(server: string, presented: string, price: Nano): ModelConfig {
  const pricing = Object.fromEntries(DIMENSIONS.flatMap((d) => (d.priceField === null ? [] : [[d.priceField, 0n]]))) as Record<DimensionPriceField, Nano>;
  return {
    id: presented,
    kind: "chat",
    provider: { name: `mcp:${server}`, type: "openai", baseUrl: `mcp:${server}`, sharedKeys: [], apis: new Set(), headers: {}, timeoutMs: 0, connectTimeoutMs: 0 },
    upstreamModel: presented,
    contextWindow: null,
    maxOutputTokens: null,
    defaultOutputTokens: 0,
    modalities: { input: ["text"], output: ["text"] },
    pricing: { ...pricing, perRequest: price, perImage: new Map() },
    tiers: [],
  };
}
