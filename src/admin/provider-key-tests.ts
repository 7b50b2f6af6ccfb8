// "Test" on a shared provider key, for the admin API, the dashboard and the CLI alike: finds the key
// (pk_… in the database, fk_… in the config file) and its provider in the catalog served now, sends the test (src/pipeline/key-test.ts), and treats
// a 401/403 answer as traffic does: the key is disabled for every process, audited, until an
// operator enables it again.
import type { GatewayConfig } from "../config/gateway-config.js";
import type { LiveCatalog } from "../config/live-catalog.js";
import { formatUsd } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";
import { testProviderKey, type KeyTestResult } from "../pipeline/key-test.js";
import type { AuditActor } from "../store/audit-store.js";
import type { Store } from "../store/index.js";

export interface KeyTestServices {
  store: Store;
  catalog: Pick<LiveCatalog, "disableRefusedKey" | "keyWithSecret">;
  /** The config served now (the catalog's providers and models). */
  config: GatewayConfig;
  timeoutMs?: number;
}

export interface ProviderKeyTest extends KeyTestResult {
  keyId: string;
  provider: string;
  /** The key is disabled now because the upstream refused it (false when it already was). */
  disabled: boolean;
}

export async function testCatalogProviderKey(services: KeyTestServices, actor: AuditActor, keyId: string): Promise<ProviderKeyTest> {
  const found = await services.catalog.keyWithSecret(keyId);
  if (!found) throw new GatewayError("not_found", `No provider key ${keyId}.`);
  const provider = services.config.providers.get(found.info.provider);
  if (!provider) throw new GatewayError("invalid_request", `The key's provider ${found.info.provider} is not in the catalog served now.`, { param: "provider" });
  const result = await testProviderKey(
    { store: services.store, config: services.config, dimensions: services.store.handle.dimensions, timeoutMs: services.timeoutMs },
    actor,
    { id: keyId, provider, last4: found.info.last4 },
    found.secret,
  );
  const disabled = result.refused && (await services.catalog.disableRefusedKey(provider.name, found.secret, result.status!));
  return { ...result, keyId, provider: provider.name, disabled };
}

/** The answer of POST …/provider-keys/{id}/test. */
export function providerKeyTestView(test: ProviderKeyTest) {
  return {
    object: "provider_key.test" as const,
    key_id: test.keyId,
    provider: test.provider,
    model: test.model,
    request_id: test.requestId,
    ok: test.ok,
    status: test.status,
    latency_ms: test.latencyMs,
    cost_nano: test.cost.toString(),
    cost_usd: formatUsd(test.cost),
    input_tokens: test.inputTokens,
    output_tokens: test.outputTokens,
    refused: test.refused,
    disabled: test.disabled,
    error: test.error,
  };
}
