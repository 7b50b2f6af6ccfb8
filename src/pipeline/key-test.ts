// "Test" on a provider key (docs/operations.md, "Testing a provider key"): the smallest request the
// provider's type declares (its descriptor's keyTest, a one-token chat) to the provider's cheapest
// chat model, with that one key, no failover, no retry and a bounded wait. The answer's status,
// latency and cost are returned; the cost is the operator's, recorded in the ledger on the
// operator's system account (store/operator-usage.ts) in the same transaction as the audit row,
// never charged to a customer. What to do with a key refused (401/403) is the caller's: the same as
// a refusal in traffic, it is disabled.
import type { ModelConfig, ProviderConfig } from "../core/catalog.js";
import { newId } from "../core/ids.js";
import type { Nano } from "../core/money.js";
import type { Usage } from "../core/usage.js";
import type { DimensionSet } from "../core/dimensions.js";
import { GatewayError } from "../errors/catalogue.js";
import { estimateChatPromptTokens } from "../billing/estimate-tokens.js";
import { priceBreakdown, priceUsage } from "../billing/pricing.js";
import { ledgerDimensionColumns } from "../billing/settlement.js";
import { normalizeUsage } from "../billing/billing-store.js";
import type { GatewayConfig } from "../config/gateway-config.js";
import type { AuditActor } from "../store/audit-store.js";
import type { Store } from "../store/index.js";
import { recordOperatorUsage } from "../store/operator-usage.js";
import { upstreamOf } from "../upstreams/registry.js";
import { signedRequest } from "../upstreams/request.js";
import { NoResponseError, sendToProvider } from "../upstreams/upstream-client.js";

/** The longest a test waits for the whole answer: an operator is watching a button. */
export const KEY_TEST_TIMEOUT_MS = 30_000;

/** Which key is tested, as the audit log and the answer name it (never the key itself). */
export interface TestedKey {
  /** "pk_…" for a key stored in the database, "fk_…" for a key of the config file. */
  id: string;
  provider: ProviderConfig;
  last4: string;
}

export interface KeyTestResult {
  requestId: string;
  model: string;
  /** The upstream's HTTP status; null when it gave no response. */
  status: number | null;
  ok: boolean;
  /** The upstream refused the key (401 or 403). */
  refused: boolean;
  latencyMs: number;
  /** What the answer cost, charged to the operator (0 without an answer). */
  cost: Nano;
  inputTokens: number;
  outputTokens: number;
  /** Why it failed, in the gateway's words (no upstream body: it may name hosts or accounts). */
  error: string | null;
}

/** The provider's chat model that the key test costs least on (deployments of routing groups included). */
export function keyTestModel(config: GatewayConfig, provider: ProviderConfig, probe: Usage): ModelConfig | null {
  let best: { model: ModelConfig; cost: Nano } | null = null;
  for (const model of config.models.values()) {
    const candidates = model.group ? model.group.deployments.map((d) => d.model) : [model];
    for (const candidate of candidates) {
      if (candidate.kind !== "chat" || candidate.provider.name !== provider.name) continue;
      const cost = priceUsage(candidate, probe);
      if (best === null || cost < best.cost || (cost === best.cost && candidate.id < best.model.id)) best = { model: candidate, cost };
    }
  }
  return best?.model ?? null;
}

/**
 * Sends the test and records it: the audit row (action catalog.provider_key.test) and, when the
 * upstream answered with usage to price, the operator's ledger row, in one transaction.
 */
export async function testProviderKey(
  deps: { store: Store; config: GatewayConfig; dimensions: DimensionSet; timeoutMs?: number },
  actor: AuditActor,
  tested: TestedKey,
  secret: string,
): Promise<KeyTestResult> {
  const { provider } = tested;
  const descriptor = upstreamOf(provider);
  const chatPlan = descriptor.chatPlan;
  if (descriptor.keyTest === null || chatPlan === null) {
    throw new GatewayError("invalid_request", `The provider ${provider.name} (type ${provider.type}) has no test request; its keys are checked by traffic only.`, {
      code: "key_test_unsupported",
    });
  }
  const body = { ...descriptor.keyTest.chatBody };
  const promptTokens = estimateChatPromptTokens(body.messages);
  const probe: Usage = { inputTokens: promptTokens, cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0, estimated: true };
  const model = keyTestModel(deps.config, provider, probe);
  if (model === null) {
    throw new GatewayError("invalid_request", `The provider ${provider.name} serves no chat model to test its key with; add one to the catalog first.`, {
      code: "key_test_unsupported",
    });
  }
  const requestId = newId("keytest");
  const plan = chatPlan({ ...body, model: model.id }, model);
  const request = await signedRequest(descriptor.authenticate, provider, "POST", plan.path, secret, JSON.stringify(plan.body));
  const signal = AbortSignal.timeout(Math.min(deps.timeoutMs ?? KEY_TEST_TIMEOUT_MS, provider.timeoutMs));
  const send = descriptor.transport ?? sendToProvider;
  const started = performance.now();
  let status: number | null = null;
  let usage: Usage | null = null;
  let error: string | null = null;
  try {
    const response = await send(provider, request, signal);
    status = response.status;
    const text = await response.body.text();
    if (status >= 200 && status < 300) {
      try {
        usage = plan.fromUpstream(JSON.parse(text)).usage ?? probe;
      } catch {
        // Answered and paid for, but not as the type's answer reads: priced as estimated.
        usage = probe;
        error = "the answer could not be read";
      }
    } else error = status === 401 || status === 403 ? `HTTP ${status}: the upstream refused the key` : `HTTP ${status}`;
  } catch (caught) {
    if (signal.aborted) error = `no response within ${Math.round((performance.now() - started) / 1000)} s`;
    else if (caught instanceof NoResponseError) error = `no response: ${caught.reason}`;
    else throw caught;
  }
  const latencyMs = Math.round(performance.now() - started);
  const refused = status === 401 || status === 403;
  let cost: Nano = 0n;
  const normalized = usage === null ? null : normalizeUsage(usage, deps.dimensions);
  const breakdown = normalized === null ? null : priceBreakdown(model, normalized, undefined, deps.dimensions);
  if (breakdown !== null) cost = breakdown.cost;
  const result: KeyTestResult = {
    requestId,
    model: model.id,
    status,
    ok: status !== null && status >= 200 && status < 300,
    refused,
    latencyMs,
    cost,
    inputTokens: normalized?.inputTokens ?? 0,
    outputTokens: normalized?.outputTokens ?? 0,
    error,
  };
  await deps.store.audited(actor, async (tx) => {
    if (normalized !== null && breakdown !== null) {
      await recordOperatorUsage(tx.trx, {
        requestId,
        model: model.id,
        provider: provider.name,
        inputTokens: BigInt(normalized.inputTokens),
        cachedTokens: BigInt(normalized.cachedInputTokens),
        outputTokens: BigInt(normalized.outputTokens),
        reasoningTokens: BigInt(normalized.reasoningTokens),
        estimated: normalized.estimated,
        cost,
        dimensionColumns: ledgerDimensionColumns(breakdown, deps.dimensions),
      });
    }
    await tx.record({
      action: "catalog.provider_key.test",
      targetType: "provider_key",
      targetId: tested.id,
      before: null,
      after: { provider: provider.name, last4: tested.last4, ...keyTestAudit(result) },
    });
  });
  return result;
}

function keyTestAudit(result: KeyTestResult) {
  return {
    request_id: result.requestId,
    model: result.model,
    status: result.status,
    latency_ms: result.latencyMs,
    cost_nano: result.cost.toString(),
    refused: result.refused,
    error: result.error,
  };
}
