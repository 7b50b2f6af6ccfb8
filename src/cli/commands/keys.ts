import { effectiveStatus, keyPolicyJson, validateKeyPolicy } from "../../accounts/key-policy.js";
import { KEY_PERIODS } from "../../billing/key-period.js";
import type { GatewayConfig } from "../../config/load.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { ApiKey, KeyPolicy, KeyPolicyChange } from "../../store/keys-store.js";
import type { Store } from "../../store/index.js";
import type { KeyPeriod } from "../../store/tables.js";
import { emit, parseCommand, requireOption, table, usd, UsageError, type CliIo } from "../io.js";
import { keyFacts } from "../../admin/account-views.js";
import { createKey, revokeKey, updateKey } from "../../admin/operations.js";
import { subjectLimitsJson } from "../../core/traffic-limits.js";
import { cliActor } from "./cli-actor.js";
import { parseCountOption, parseLimits, parseMoneyOption, parseOnOff, requireAccount } from "./parse.js";

/** The policy options of `keys create` and `keys set-policy`; "none" removes a restriction. */
const POLICY_OPTIONS = {
  models: { type: "string" },
  networks: { type: "string" },
  expires: { type: "string" },
  period: { type: "string" },
  "period-budget": { type: "string" },
  "period-token-cap": { type: "string" },
  guardrails: { type: "string" },
} as const;

type Values = Record<string, string | boolean | undefined>;

function listOption(values: Values, name: string): string[] | null | undefined {
  const text = values[name];
  if (text === undefined) return undefined;
  if (typeof text !== "string" || text === "") throw new UsageError(`--${name} needs a comma-separated list, or none`);
  if (text === "none") return null;
  return text.split(",").map((entry) => entry.trim());
}

function policyOptions(values: Values): KeyPolicyChange {
  const change: KeyPolicyChange = {};
  const models = listOption(values, "models");
  if (models !== undefined) change.allowedModels = models;
  const networks = listOption(values, "networks");
  if (networks !== undefined) change.allowedNetworks = networks;
  const guardrails = listOption(values, "guardrails");
  if (guardrails !== undefined) change.guardrails = guardrails;
  const expires = values.expires;
  if (expires !== undefined) {
    const ms = typeof expires === "string" && /^\d{4}-\d{2}-\d{2}/.test(expires) ? Date.parse(expires) : NaN;
    if (expires !== "none" && Number.isNaN(ms)) throw new UsageError(`--expires: "${String(expires)}" is not an ISO date-time (e.g. 2026-12-31T00:00:00Z) or none`);
    change.expiresAt = expires === "none" ? null : ms;
  }
  const period = values.period;
  if (period !== undefined) {
    if (period !== "none" && !KEY_PERIODS.includes(period as KeyPeriod)) throw new UsageError(`--period must be day, week, month or none, not "${String(period)}"`);
    change.period = period === "none" ? null : (period as KeyPeriod);
  }
  if (values["period-budget"] !== undefined) change.periodBudget = values["period-budget"] === "none" ? null : parseMoneyOption(values, "period-budget");
  if (values["period-token-cap"] !== undefined) change.periodTokenCap = values["period-token-cap"] === "none" ? null : parseCountOption(values, "period-token-cap");
  return change;
}

async function checkedPolicy(store: Store, config: GatewayConfig, accountId: string, change: KeyPolicyChange, current: KeyPolicy | null): Promise<KeyPolicyChange> {
  const account = await store.accounts.get(accountId);
  if (!account) throw new GatewayError("account_not_found", `no account ${accountId}`);
  return validateKeyPolicy(change, { config, tier: account.tier, now: Date.now(), current });
}

export function keyJson(k: ApiKey, now = Date.now()) {
  return {
    ...keyFacts(k, now),
    clamping: k.clampOutput ? "on" : "off",
    policy: keyPolicyJson(k, now),
    limits: subjectLimitsJson(k.limits),
    created_at: new Date(k.createdAt).toISOString(),
    revoked_at: k.revokedAt === null ? null : new Date(k.revokedAt).toISOString(),
  };
}

export async function keysCommand(sub: string | undefined, args: string[], io: CliIo, store: Store, config: GatewayConfig): Promise<void> {
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
          ...POLICY_OPTIONS,
          limits: { type: "string" },
        },
        [],
      );
      const accountId = requireOption(values, "account");
      const policy = await checkedPolicy(store, config, accountId, policyOptions(values), null);
      const input = {
        accountId,
        policy,
        name: typeof values.name === "string" ? values.name : "",
        budgetCap: parseMoneyOption(values, "budget-cap"),
        tokenCap: parseCountOption(values, "token-cap"),
        clampOutput: parseOnOff(values.clamping, "--clamping") ?? true,
        limits: parseLimits(values.limits, "--limits") ?? null,
      };
      const { key, raw } = await store.audited(cliActor(), (tx) => createKey(tx, input));
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
      return emit(
        io,
        json,
        keys.map((k) => keyJson(k)),
        () =>
          table(
            keys.map((k) => ({
              id: k.id,
              name: k.name,
              prefix: k.prefix,
              status: effectiveStatus(k, Date.now()),
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
      const clampOutput = parseOnOff(setting, "the setting") === true;
      const key = await store.audited(cliActor(), (tx) => updateKey(tx, id, { clampOutput }, null));
      return emit(io, json, keyJson(key), () => `key ${key.id}: clamping ${key.clampOutput ? "on" : "off"}`);
    }
    case "set-policy": {
      const { values, positionals, json } = parseCommand(args, POLICY_OPTIONS, ["KEY_ID"]);
      const id = positionals[0]!;
      const change = policyOptions(values);
      if (Object.keys(change).length === 0)
        throw new UsageError(
          `give at least one of ${Object.keys(POLICY_OPTIONS)
            .map((o) => `--${o}`)
            .join(", ")}`,
        );
      const current = await store.keys.get(id);
      if (!current) throw new GatewayError("not_found", `no key ${id}`);
      const policy = await checkedPolicy(store, config, current.accountId, change, current);
      const key = await store.audited(cliActor(), (tx) => updateKey(tx, id, { policy }, null));
      return emit(io, json, keyJson(key), () => `key ${key.id}: policy ${JSON.stringify(keyPolicyJson(key, Date.now()))}`);
    }
    case "set-limits": {
      const { positionals, json } = parseCommand(args, {}, ["KEY_ID", "JSON|none"]);
      const [id, text] = positionals as [string, string];
      // Gateways drop the key from their caches within a second (auth_events) and then apply the limits.
      const limits = parseLimits(text, "the limits") ?? null;
      const key = await store.audited(cliActor(), (tx) => updateKey(tx, id, { limits }, null));
      return emit(io, json, keyJson(key), () => `key ${key.id}: limits ${key.limits === null ? "none (the tier's apply)" : JSON.stringify(subjectLimitsJson(key.limits))}`);
    }
    case "revoke": {
      const { positionals, json } = parseCommand(args, {}, ["KEY_ID"]);
      const key = await store.audited(cliActor(), (tx) => revokeKey(tx, positionals[0]!));
      return emit(io, json, keyJson(key), () => `key ${key.id} is revoked`);
    }
    default:
      throw new UsageError("usage: gateway admin keys create|list|set-clamping|set-policy|set-limits|revoke");
  }
}
