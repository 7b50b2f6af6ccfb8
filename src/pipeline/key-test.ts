// "Test" on a provider key (docs/operations.md, "Testing a provider key"): the smallest request the
// provider's type declares (its descriptor's keyTest, a one-token chat) to the provider's cheapest
// chat model, with that one key, no failover, no retry and a bounded wait. The answer's status,
// latency and cost are returned; the cost is the operator's, recorded in the ledger on the
// operator's system account (store/operator-usage.ts) in the same transaction as the audit row,
// never charged to a customer. What to do with a key refused (401/403) is the caller's: the same as
// a refusal in traffic, it is disabled. The active health probes (health-probes.ts) send the same
// request to a deployment's model (sendKeyTest) and charge the operator the same way.
import type { ModelConfig, ProviderConfig } from "../core/catalog.js";
import { newId } from "../core/ids.js";
import type { Nano } from "../core/money.js";
import type { Usage } from "../core/usage.js";
import type { DimensionSet } from "../core/dimensions.js";
import { GatewayError } from "../errors/catalogue.js";
import { estimateChatPromptTokens } from "../billing/estimate-tokens.js";
import { priceBreakdown, priceUsage, type PriceBreakdown } from "../billing/pricing.js";
import { ledgerDimensionColumns } from "../billing/settlement.js";
import { normalizeUsage } from "../billing/billing-store.js";
import type { GatewayConfig } from "../config/gateway-config.js";
import type { AuditActor } from "../store/audit-store.js";
import type { Store } from "../store/index.js";
import type { Database } from "../store/tables.js";
import type { Transaction } from "kysely";
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

/** A test sent: its result, and the usage to charge the operator when the upstream answered. */
export interface SentKeyTest {
  result: KeyTestResult;
  charge: OperatorCharge | null;
}

interface OperatorCharge {
  provider: string;
  normalized: Usage;
  breakdown: PriceBreakdown;
}

/** The test's request body, the estimate it is priced at, and the chat plan of the provider's type; throws when the type has none. */
function testRequestOf(provider: ProviderConfig) {
  const descriptor = upstreamOf(provider);
  const chatPlan = descriptor.chatPlan;
  if (descriptor.keyTest === null || chatPlan === null) {
    throw new GatewayError("invalid_request", `The provider ${provider.name} (type ${provider.type}) has no test request; its keys are checked by traffic only.`, {
      code: "key_test_unsupported",
    });
  }
  const body = { ...descriptor.keyTest.chatBody };
  const probe: Usage = { inputTokens: estimateChatPromptTokens(body.messages), cachedInputTokens: 0, outputTokens: 1, reasoningTokens: 0, estimated: true };
  return { descriptor, chatPlan, body, probe };
}

/**
 * Sends the smallest request of the model's provider type to `model` with the one key `secret`, no
 * failover, no retry, at most `timeoutMs` (and the provider's timeout). Records nothing: the key
 * test and the health probes (health-probes.ts) record it each their way.
 */
export async function sendKeyTest(model: ModelConfig, secret: string, dimensions: DimensionSet, timeoutMs: number): Promise<SentKeyTest> {
  const provider = model.provider;
  const { descriptor, chatPlan, body, probe } = testRequestOf(provider);
  const requestId = newId("keytest");
  const plan = chatPlan({ ...body, model: model.id }, model);
  const request = await signedRequest(descriptor.authenticate, provider, "POST", plan.path, secret, JSON.stringify(plan.body));
  const signal = AbortSignal.timeout(Math.min(timeoutMs, provider.timeoutMs));
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
  const normalized = usage === null ? null : normalizeUsage(usage, dimensions);
  const breakdown = normalized === null ? null : priceBreakdown(model, normalized, undefined, dimensions);
  const result: KeyTestResult = {
    requestId,
    model: model.id,
    status,
    ok: status !== null && status >= 200 && status < 300,
    refused: status === 401 || status === 403,
    latencyMs,
    cost: breakdown?.cost ?? 0n,
    inputTokens: normalized?.inputTokens ?? 0,
    outputTokens: normalized?.outputTokens ?? 0,
    error,
  };
  return { result, charge: normalized !== null && breakdown !== null ? { provider: provider.name, normalized, breakdown } : null };
}

/** The operator's ledger row for a test that the upstream answered (none otherwise), inside the caller's transaction. */
export async function chargeOperator(trx: Transaction<Database>, sent: SentKeyTest, dimensions: DimensionSet): Promise<void> {
  if (sent.charge === null) return;
  const { normalized, breakdown, provider } = sent.charge;
  await recordOperatorUsage(trx, {
    requestId: sent.result.requestId,
    model: sent.result.model,
    provider,
    inputTokens: BigInt(normalized.inputTokens),
    cachedTokens: BigInt(normalized.cachedInputTokens),
    outputTokens: BigInt(normalized.outputTokens),
    reasoningTokens: BigInt(normalized.reasoningTokens),
    estimated: normalized.estimated,
    cost: sent.result.cost,
    dimensionColumns: ledgerDimensionColumns(breakdown, dimensions),
  });
}

/**
 * Sends the test to the provider's cheapest chat model and records it: the audit row (action
 * catalog.provider_key.test) and, when the upstream answered with usage to price, the operator's
 * ledger row, in one transaction.
 */
export async function testProviderKey(
  deps: { store: Store; config: GatewayConfig; dimensions: DimensionSet; timeoutMs?: number },
  actor: AuditActor,
  tested: TestedKey,
  secret: string,
): Promise<KeyTestResult> {
  const { provider } = tested;
  const { probe } = testRequestOf(provider);
  const model = keyTestModel(deps.config, provider, probe);
  if (model === null) {
    throw new GatewayError("invalid_request", `The provider ${provider.name} serves no chat model to test its key with; add one to the catalog first.`, {
      code: "key_test_unsupported",
    });
  }
  const sent = await sendKeyTest(model, secret, deps.dimensions, deps.timeoutMs ?? KEY_TEST_TIMEOUT_MS);
  await deps.store.audited(actor, async (tx) => {
    await chargeOperator(tx.trx, sent, deps.dimensions);
    await tx.record({
      action: "catalog.provider_key.test",
      targetType: "provider_key",
      targetId: tested.id,
      before: null,
      after: { provider: provider.name, last4: tested.last4, ...keyTestAudit(sent.result) },
    });
  });
  return sent.result;
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
