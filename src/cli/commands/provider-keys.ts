import type { GatewayConfig } from "../../config/load.js";
import type { Store } from "../../store/index.js";
import { emit, parseCommand, requireOption, table, UsageError, type CliIo } from "../io.js";
import { addProviderKey, removeProviderKey } from "../../admin/operations.js";
import { cliActor } from "./cli-actor.js";
import { requireAccount } from "./parse.js";

export async function providerKeysCommand(sub: string | undefined, args: string[], io: CliIo, store: Store, config: GatewayConfig): Promise<number | void> {
  switch (sub) {
    case "add": {
      const { values, json } = parseCommand(args, { account: { type: "string" }, provider: { type: "string" }, key: { type: "string" }, label: { type: "string" } }, []);
      const provider = requireOption(values, "provider");
      if (!config.providers.has(provider)) {
        throw new UsageError(`--provider: unknown provider "${provider}" (configured: ${[...config.providers.keys()].join(", ") || "none"})`);
      }
      // "--key -" reads the key from standard input, keeping it out of shell history.
      let secret = requireOption(values, "key");
      if (secret === "-") secret = ((await io.readStdin?.()) ?? "").trim();
      const input = { accountId: requireOption(values, "account"), provider, key: secret, label: typeof values.label === "string" ? values.label : "" };
      const info = await store.audited(cliActor(), (tx) => addProviderKey(tx, input));
      return emit(io, json, toJson(info), () => `added ${provider} key …${info.last4} (${info.id}) for account ${info.accountId}`);
    }
    case "list": {
      const { values, json } = parseCommand(args, { account: { type: "string" } }, []);
      const accountId = requireOption(values, "account");
      await requireAccount(store, accountId);
      const keys = await store.upstreamKeys.list(accountId);
      return emit(io, json, keys.map(toJson), () => table(keys.map((k) => ({ id: k.id, provider: k.provider, label: k.label, key: `…${k.last4}` }))));
    }
    case "remove": {
      const { positionals, json } = parseCommand(args, {}, ["ID"]);
      await store.audited(cliActor(), (tx) => removeProviderKey(tx, positionals[0]!));
      return emit(io, json, { id: positionals[0], removed: true }, () => `removed upstream key ${positionals[0]}`);
    }
    case "test": {
      // A shared key of the catalog (its pk_ id, or fk_ for a key of the config file, from GET
      // /admin/v1/catalog): one smallest request, paid by the operator; a key refused with 401/403 is
      // disabled for every process.
      const { positionals, json } = parseCommand(args, {}, ["ID"]);
      const [{ configFromDatabase, LiveCatalog }, { testCatalogProviderKey, providerKeyTestView }] = await Promise.all([
        import("../../config/live-catalog.js"),
        import("../../admin/provider-key-tests.js"),
      ]);
      const served = config.catalogSource === "database" ? await configFromDatabase(store, config, cliActor()) : config;
      // The running gateways swap the disabled key out through their catalog watch.
      const catalog = new LiveCatalog(
        store,
        () => served,
        async () => undefined,
      );
      const test = await testCatalogProviderKey({ store, catalog, config: served }, cliActor(), positionals[0]!);
      const view = providerKeyTestView(test);
      emit(io, json, view, () =>
        [
          `${test.provider} key ${test.keyId}: ${test.ok ? "works" : test.refused ? "refused by the upstream" : "failed"}${test.disabled ? " (disabled now)" : ""}`,
          `  status ${test.status === null ? "no response" : `HTTP ${test.status}`}, ${test.latencyMs} ms, cost ${view.cost_usd} USD (the operator's), model ${test.model}`,
          ...(test.error ? [`  ${test.error}`] : []),
        ].join("\n"),
      );
      // Exit 1 when the key did not work, for scripts.
      return test.ok ? 0 : 1;
    }
    default:
      throw new UsageError("usage: gateway admin provider-keys add|list|remove|test");
  }
}

function toJson(k: { id: string; accountId: string; provider: string; label: string; last4: string; createdAt: number }) {
  return { id: k.id, account_id: k.accountId, provider: k.provider, label: k.label, last4: k.last4, created_at: new Date(k.createdAt).toISOString() };
}
