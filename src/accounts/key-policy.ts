// Key policies (ADR 0017): what one key may do beyond its account's tier. Validated here once for the
// dashboard API and the CLI; enforced by authenticate (expiry, networks), checkTier (models),
// GET /v1/models (listing) and admission (the periodic budget, admission.ts).
import { BlockList, isIP } from "node:net";
import type { GatewayConfig } from "../config/load.js";
import { currentPeriodUse, nextPeriodStart, periodStart } from "../billing/key-period.js";
import { formatUsd, MAX_BALANCE, type Nano } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";
import { MAX_SELECTED_GUARDRAILS } from "../core/guardrails/guardrail.js";
import { parseProxyRange } from "../core/trusted-proxies.js";
import { isMcpAllowlistEntry, MAX_MCP_ALLOWLIST } from "../core/mcp-names.js";
import { checkedDefaultTags, type Tags } from "../core/request-tags.js";
import type { KeyPolicy, KeyPolicyChange } from "../store/keys-store.js";
import type { KeyPeriod } from "../store/tables.js";

export const MAX_ALLOWED_MODELS = 100;
export const MAX_ALLOWED_NETWORKS = 100;
const MAX_ENTRY_LENGTH = 256;
/** The periodic budget's bounds: those of the lifetime caps (the CLI's and the dashboard's). */
export const MAX_PERIOD_BUDGET: Nano = MAX_BALANCE * 1000n;
/** An expiry more than 100 years ahead is a typo, not a policy. */
const MAX_EXPIRY_AHEAD_MS = 100 * 365 * 86_400_000;

function invalid(param: string, message: string): GatewayError {
  return new GatewayError("invalid_request", `${param}: ${message}`, { param });
}

/**
 * Checks a change against the catalogue and the key's account tier, and against the policy it
 * applies to (`current`, null on creation): a period needs a budget or token cap and the other way
 * round. Returns the change with lists de-duplicated and networks in canonical text.
 */
export function validateKeyPolicy(change: KeyPolicyChange, context: { config: GatewayConfig; tier: string; now: number; current: KeyPolicy | null }): KeyPolicyChange {
  const out: KeyPolicyChange = { ...change };
  if (change.allowedModels != null) {
    const models = [...new Set(change.allowedModels)];
    if (models.length === 0) throw invalid("allowed_models", "give at least one model, or null to allow every model of the tier");
    if (models.length > MAX_ALLOWED_MODELS) throw invalid("allowed_models", `at most ${MAX_ALLOWED_MODELS} models`);
    for (const id of models) {
      if (typeof id !== "string" || id.length === 0 || id.length > MAX_ENTRY_LENGTH) throw invalid("allowed_models", `each model id is 1 to ${MAX_ENTRY_LENGTH} characters`);
      const model = context.config.models.get(id);
      if (!model) throw invalid("allowed_models", `the model ${id} does not exist`);
      if (!model.tiers.includes(context.tier)) throw invalid("allowed_models", `the model ${id} is not included in the account's ${context.tier} tier`);
    }
    out.allowedModels = models;
  }
  if (change.allowedMcp != null) out.allowedMcp = validMcpAllowlist(change.allowedMcp, "allowed_mcp");
  if (change.allowedNetworks != null) {
    const networks = [...new Set(change.allowedNetworks.map((n) => (typeof n === "string" ? n.trim() : n)))];
    if (networks.length === 0) throw invalid("allowed_networks", "give at least one CIDR range, or null to allow every network");
    if (networks.length > MAX_ALLOWED_NETWORKS) throw invalid("allowed_networks", `at most ${MAX_ALLOWED_NETWORKS} ranges`);
    out.allowedNetworks = networks.map((entry) => {
      if (typeof entry !== "string" || entry.length > MAX_ENTRY_LENGTH) throw invalid("allowed_networks", `each range is at most ${MAX_ENTRY_LENGTH} characters`);
      const range = parseProxyRange(entry);
      if ("error" in range) throw invalid("allowed_networks", range.error);
      return `${range.address}/${range.prefix}`;
    });
  }
  if (change.expiresAt != null) {
    if (!Number.isSafeInteger(change.expiresAt)) throw invalid("expires_at", "must be a date-time");
    if (change.expiresAt > context.now + MAX_EXPIRY_AHEAD_MS) throw invalid("expires_at", "must be within 100 years");
  }
  if (change.periodBudget != null && (change.periodBudget < 0n || change.periodBudget > MAX_PERIOD_BUDGET)) {
    throw invalid("period_budget_usd", "must be a non-negative USD amount of at most 1000000000");
  }
  if (change.periodTokenCap != null && (!Number.isSafeInteger(change.periodTokenCap) || change.periodTokenCap < 0)) {
    throw invalid("period_token_cap", "must be a non-negative whole number");
  }
  if (change.guardrails !== undefined) out.guardrails = checkedGuardrailNames(change.guardrails, context.config);
  if (change.defaultTags != null) {
    const tags = checkedDefaultTags(change.defaultTags, "default_tags");
    out.defaultTags = Object.keys(tags).length === 0 ? null : tags;
  }
  const pick = <K extends keyof KeyPolicy>(name: K): KeyPolicy[K] | null => (out[name] === undefined ? (context.current?.[name] ?? null) : (out[name] as KeyPolicy[K]));
  const period = pick("period");
  const hasBudget = pick("periodBudget") !== null || pick("periodTokenCap") !== null;
  if (period === null && hasBudget) throw invalid("period", "a periodic budget needs its period: day, week or month");
  if (period !== null && !hasBudget) throw invalid("period", "a period needs period_budget_usd and/or period_token_cap");
  return out;
}

/**
 * A key's or workspace's guardrail list checked against the config file: each name must be one of its
 * guardrails, at most MAX_SELECTED_GUARDRAILS of them; de-duplicated, null for none.
 */
export function checkedGuardrailNames(names: readonly string[] | null, config: Pick<GatewayConfig, "guardrails">): string[] | null {
  if (names === null) return null;
  const unique = [...new Set(names)];
  if (unique.length > MAX_SELECTED_GUARDRAILS) throw invalid("guardrails", `at most ${MAX_SELECTED_GUARDRAILS} guardrails`);
  for (const name of unique) {
    if (!config.guardrails.list.some((g) => g.name === name)) throw invalid("guardrails", `the guardrail ${name} does not exist`);
  }
  return unique.length === 0 ? null : unique;
}

/**
 * An MCP allowlist (a key's or a workspace's) de-duplicated: at least one and at most
 * MAX_MCP_ALLOWLIST entries, each a server name or a prefixed tool name (core/mcp-names.ts). Servers
 * are not looked up in the config: a reload may add or remove them, and an entry naming none allows nothing.
 */
export function validMcpAllowlist(list: readonly string[], param: string): string[] {
  const entries = [...new Set(list)];
  if (entries.length === 0) throw invalid(param, "give at least one MCP server or tool, or null to allow every one");
  if (entries.length > MAX_MCP_ALLOWLIST) throw invalid(param, `at most ${MAX_MCP_ALLOWLIST} entries`);
  for (const entry of entries) {
    if (typeof entry !== "string" || !isMcpAllowlistEntry(entry)) throw invalid(param, `"${String(entry).slice(0, 80)}" is neither an MCP server name nor server__tool`);
  }
  return entries;
}

/** True when the key may call `modelId` (a model or routing group id) under its policy. */
export function modelAllowed(allowedModels: readonly string[] | null, modelId: string): boolean {
  return allowedModels === null || allowedModels.includes(modelId);
}

const compiledNetworks = new WeakMap<readonly string[], BlockList>();

/** True when `address` (the client's, request.ip) lies inside one of the ranges; no list allows all. */
export function networkAllowed(allowedNetworks: readonly string[] | null, address: string | undefined): boolean {
  if (allowedNetworks === null) return true;
  let list = compiledNetworks.get(allowedNetworks);
  if (!list) {
    list = new BlockList();
    for (const entry of allowedNetworks) {
      const range = parseProxyRange(entry);
      if (!("error" in range)) list.addSubnet(range.address, range.prefix, range.family);
    }
    compiledNetworks.set(allowedNetworks, list);
  }
  const version = address ? isIP(address) : 0;
  return version !== 0 && list.check(address!, version === 4 ? "ipv4" : "ipv6");
}

/** True once the key's expiry time has come. */
export function keyExpired(expiresAt: number | null, now: number): boolean {
  return expiresAt !== null && now >= expiresAt;
}

/** What listings show for a key: "expired" once its expiry has come (unless revoked), else the stored status. */
export function effectiveStatus(key: { status: string; expiresAt: number | null }, now: number): string {
  return key.status !== "revoked" && keyExpired(key.expiresAt, now) ? "expired" : key.status;
}

interface PolicyView {
  status: string;
  expiresAt: number | null;
  allowedModels: string[] | null;
  allowedMcp: string[] | null;
  allowedNetworks: string[] | null;
  period: KeyPeriod | null;
  periodBudget: Nano | null;
  periodTokenCap: number | null;
  periodStartedAt: number;
  periodSpent: Nano;
  periodTokensUsed: number;
  guardrails: string[];
  defaultTags?: Tags | null;
}

/** The policy as the dashboard API, the CLI (--json) and GET /v1/me show it: money as USD text, times as ISO. */
export function keyPolicyJson(key: PolicyView, now: number) {
  let periodic = null;
  if (key.period !== null) {
    const use = currentPeriodUse(key.period, key.periodStartedAt, key.periodSpent, key.periodTokensUsed, now);
    periodic = {
      period: key.period,
      budget_usd: key.periodBudget === null ? null : formatUsd(key.periodBudget),
      token_cap: key.periodTokenCap,
      spent_usd: formatUsd(use.spent),
      tokens_used: use.tokens,
      period_start: new Date(periodStart(key.period, now)).toISOString(),
      resets_at: new Date(nextPeriodStart(key.period, now)).toISOString(),
    };
  }
  return {
    allowed_models: key.allowedModels,
    allowed_networks: key.allowedNetworks,
    allowed_mcp: key.allowedMcp,
    expires_at: key.expiresAt === null ? null : new Date(key.expiresAt).toISOString(),
    expired: keyExpired(key.expiresAt, now),
    periodic_budget: periodic,
    guardrails: key.guardrails,
    default_tags: key.defaultTags ?? null,
  };
}
