import { ACCOUNT_STATUSES, type Account, type AccountStatus } from "../../store/accounts-store.js";
import type { Store } from "../../store/index.js";
import type { GatewayConfig } from "../../config/load.js";
import { emit, parseCommand, requireOption, table, usd, UsageError, type CliIo } from "../io.js";
import { adjustBalance, createAccount, updateAccount } from "../../admin/operations.js";
import { subjectLimitsJson } from "../../core/traffic-limits.js";
import { cliActor } from "./cli-actor.js";
import { parseMoneyOption, parseCountOption, parseLimits, parseOnOff } from "./parse.js";

export function accountJson(a: Account) {
  return {
    id: a.id,
    email: a.email,
    status: a.status,
    tier: a.tier,
    is_admin: a.isAdmin,
    balance_usd: usd(a.balance),
    total_spent_usd: usd(a.totalSpent),
    monthly_budget_usd: usd(a.monthlyBudget),
    monthly_token_budget: a.monthlyTokenBudget,
    default_model: a.defaultModel,
    clamping: a.clampOutput ? "on" : "off",
    limits: subjectLimitsJson(a.limits),
    password_set: a.hasPassword,
    created_at: new Date(a.createdAt).toISOString(),
  };
}

function accountRow(a: Account) {
  return { id: a.id, email: a.email, status: a.status, tier: a.tier, balance_usd: usd(a.balance), spent_usd: usd(a.totalSpent) };
}

export async function accountsCommand(sub: string | undefined, args: string[], io: CliIo, store: Store, config: GatewayConfig): Promise<void> {
  switch (sub) {
    case "create": {
      const { values, json } = parseCommand(
        args,
        {
          email: { type: "string" },
          balance: { type: "string" },
          tier: { type: "string" },
          "monthly-budget": { type: "string" },
          "monthly-token-budget": { type: "string" },
          "default-model": { type: "string" },
          admin: { type: "boolean" },
          clamping: { type: "string" },
        },
        [],
      );
      const email = requireOption(values, "email");
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new UsageError(`--email: "${email}" is not an email address`);
      const tier = typeof values.tier === "string" ? values.tier : config.defaultTier;
      if (!config.tiers.has(tier)) throw new UsageError(`--tier: unknown tier "${tier}" (configured: ${[...config.tiers.keys()].join(", ")})`);
      const account = await store.audited(cliActor(), (tx) =>
        createAccount(tx, {
          email,
          tier,
          balance: parseMoneyOption(values, "balance") ?? 0n,
          monthlyBudget: parseMoneyOption(values, "monthly-budget"),
          monthlyTokenBudget: parseCountOption(values, "monthly-token-budget"),
          defaultModel: typeof values["default-model"] === "string" ? values["default-model"] : null,
          isAdmin: values.admin === true,
          clampOutput: parseOnOff(values.clamping, "--clamping") ?? true,
        }),
      );
      return emit(io, json, accountJson(account), () => `created account ${account.id} (${account.email}), balance ${usd(account.balance)} USD, tier ${account.tier}`);
    }
    case "list": {
      const { json } = parseCommand(args, {}, []);
      const accounts = await store.accounts.list();
      return emit(io, json, accounts.map(accountJson), () => table(accounts.map(accountRow)));
    }
    case "set-status": {
      const { positionals, json } = parseCommand(args, {}, ["ID", "STATUS"]);
      const [id, status] = positionals as [string, string];
      if (!ACCOUNT_STATUSES.includes(status as AccountStatus)) throw new UsageError(`STATUS must be one of ${ACCOUNT_STATUSES.join(", ")}, not "${status}"`);
      const account = await store.audited(cliActor(), (tx) => updateAccount(tx, id, { status: status as AccountStatus }));
      return emit(io, json, accountJson(account), () => `account ${account.id} is now ${account.status}`);
    }
    case "set-clamping": {
      const { positionals, json } = parseCommand(args, {}, ["ID", "on|off"]);
      const [id, setting] = positionals as [string, string];
      const clampOutput = parseOnOff(setting, "the setting");
      const account = await store.audited(cliActor(), (tx) => updateAccount(tx, id, { ...(clampOutput !== undefined && { clampOutput }) }));
      return emit(io, json, accountJson(account), () => `account ${account.id}: clamping ${account.clampOutput ? "on" : "off"}`);
    }
    case "set-limits": {
      const { positionals, json } = parseCommand(args, {}, ["ID", "JSON|none"]);
      const [id, text] = positionals as [string, string];
      const limits = parseLimits(text, "the limits") ?? null;
      const account = await store.audited(cliActor(), (tx) => updateAccount(tx, id, { limits }));
      return emit(
        io,
        json,
        accountJson(account),
        () => `account ${account.id}: limits ${account.limits === null ? "none (the tier's apply)" : JSON.stringify(subjectLimitsJson(account.limits))}`,
      );
    }
    case "credit":
    case "debit": {
      const { positionals, values, json } = parseCommand(args, { note: { type: "string" } }, ["ID", "USD"]);
      const [id, amountText] = positionals as [string, string];
      const amount = parseMoneyOption({ amount: amountText }, "amount", "USD");
      if (amount === null || amount <= 0n) throw new UsageError(`USD must be a positive amount, not "${amountText}"`);
      const note = typeof values.note === "string" ? values.note : null;
      const account = await store.audited(cliActor(), (tx) => adjustBalance(tx, id, sub === "credit" ? amount : -amount, note));
      return emit(io, json, accountJson(account), () => `account ${account.id} balance is now ${usd(account.balance)} USD`);
    }
    default:
      throw new UsageError("usage: gateway admin accounts create|list|set-status|set-clamping|set-limits|credit|debit");
  }
}
