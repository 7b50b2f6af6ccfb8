import type { ApiKey } from "../../store/keys-store.js";
import type { Store } from "../../store/index.js";
import { emit, parseCommand, requireOption, table, usd, UsageError, type CliIo } from "../io.js";
import { subjectLimitsJson } from "../../billing/traffic-limits.js";
import { parseCountOption, parseLimits, parseMoneyOption, parseOnOff, requireAccount } from "./parse.js";

export function keyJson(k: ApiKey) {
  return {
    id: k.id,
    account_id: k.accountId,
    workspace_id: k.workspaceId,
    name: k.name,
    prefix: k.prefix,
    status: k.status,
    budget_cap_usd: usd(k.budgetCap),
    spent_usd: usd(k.spent),
    token_cap: k.tokenCap,
    tokens_used: k.tokensUsed,
    clamping: k.clampOutput ? "on" : "off",
    limits: subjectLimitsJson(k.limits),
    created_at: new Date(k.createdAt).toISOString(),
    revoked_at: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
  };
}

export async function keysCommand(sub: string | undefined, args: string[], io: CliIo, store: Store): Promise<void> {
  switch (sub) {
    case "create": {
      const { values, json } = parseCommand(
        args,
        {
          account: { type: "string" },
          name: { type: "string" },
          "budget-cap": { type: "string" },
          "token-cap": { type: "string" },
          clamping: { type: "string" },
          limits: { type: "string" },
        },
        [],
      );
      const { key, raw } = await store.keys.create({
        accountId: requireOption(values, "account"),
        name: typeof values.name === "string" ? values.name : "",
        budgetCap: parseMoneyOption(values, "budget-cap"),
        tokenCap: parseCountOption(values, "token-cap"),
        clampOutput: parseOnOff(values.clamping, "--clamping") ?? true,
        limits: parseLimits(values.limits, "--limits") ?? null,
      });
      return emit(
        io,
        json,
        { ...keyJson(key), key: raw },
        () => `created key ${key.id} for account ${key.accountId}\n${raw}\nThis is the only time the key is shown; store it now.`,
      );
    }
    case "list": {
      const { values, json } = parseCommand(args, { account: { type: "string" } }, []);
      const accountId = requireOption(values, "account");
      await requireAccount(store, accountId);
      const keys = await store.keys.listByAccount(accountId);
      return emit(io, json, keys.map(keyJson), () =>
        table(
          keys.map((k) => ({
            id: k.id,
            name: k.name,
            prefix: k.prefix,
            status: k.status,
            spent_usd: usd(k.spent),
            budget_cap_usd: usd(k.budgetCap),
            tokens_used: k.tokensUsed,
            token_cap: k.tokenCap,
          })),
        ),
      );
    }
    case "set-clamping": {
      const { positionals, json } = parseCommand(args, {}, ["KEY_ID", "on|off"]);
      const [id, setting] = positionals as [string, string];
      const key = await store.keys.setClampOutput(id, parseOnOff(setting, "the setting") === true);
      return emit(io, json, keyJson(key), () => `key ${key.id}: clamping ${key.clampOutput ? "on" : "off"}`);
    }
    case "set-limits": {
      const { positionals, json } = parseCommand(args, {}, ["KEY_ID", "JSON|none"]);
      const [id, text] = positionals as [string, string];
      // Gateways drop the key from their caches within a second (auth_events) and then apply the limits.
      const key = await store.keys.setLimits(id, parseLimits(text, "the limits") ?? null);
      return emit(io, json, keyJson(key), () => `key ${key.id}: limits ${key.limits === null ? "none (the tier's apply)" : JSON.stringify(subjectLimitsJson(key.limits))}`);
    }
    case "revoke": {
      const { positionals, json } = parseCommand(args, {}, ["KEY_ID"]);
      const key = await store.keys.revoke(positionals[0]!);
      return emit(io, json, keyJson(key), () => `key ${key.id} is revoked`);
    }
    default:
      throw new UsageError("usage: gateway admin keys create|list|set-clamping|set-limits|revoke");
  }
}
