// The key-policy fields of the admin API and the dashboard, and the change they ask for checked
// against the catalogue and the tier.
import { z } from "zod";
import { validateKeyPolicy } from "../accounts/key-policy.js";
import type { GatewayConfig } from "../config/load.js";
import { MAX_SELECTED_GUARDRAILS } from "../core/guardrails/guardrail.js";
import { GatewayError } from "../errors/catalogue.js";
import type { RouteContext } from "../http/route-context.js";
import type { ApiKey, KeyPolicyChange } from "../store/keys-store.js";
import { tokenCount, usdAmount } from "./validate.js";

// Key policies (ADR 0017); the catalogue, the tier and the pairing of period and budget are checked by
// validateKeyPolicy. null removes a restriction.
export const policyFields = {
  allowed_models: z.array(z.string().min(1).max(256)).max(100).nullable().optional(),
  allowed_networks: z.array(z.string().min(1).max(64)).max(100).nullable().optional(),
  /** MCP servers and tools the key may use at /mcp (core/mcp-names.ts); checked by validateKeyPolicy. */
  allowed_mcp: z.array(z.string().min(1).max(200)).max(100).nullable().optional(),
  expires_at: z.iso.datetime({ offset: true }).nullable().optional(),
  period: z.enum(["day", "week", "month"]).nullable().optional(),
  period_budget_usd: usdAmount.nullable().optional(),
  period_token_cap: tokenCount.nullable().optional(),
  /** Guardrail names from the config file (applies: selected) the key switches on; null or [] removes them. */
  guardrails: z.array(z.string().min(1).max(64)).max(MAX_SELECTED_GUARDRAILS).nullable().optional(),
  // Default tags (core/request-tags.ts checks each key and value): {key: value}, at most 10.
  default_tags: z
    .record(z.string().min(1).max(64), z.string().min(1).max(128))
    .refine((tags) => Object.keys(tags).length <= 10, "at most 10 tags")
    .nullable()
    .optional(),
};
export type PolicyBody = { [K in keyof typeof policyFields]?: z.infer<(typeof policyFields)[K]> };

export function policyChange(body: PolicyBody): KeyPolicyChange {
  return {
    ...(body.allowed_models !== undefined && { allowedModels: body.allowed_models }),
    ...(body.allowed_networks !== undefined && { allowedNetworks: body.allowed_networks }),
    ...(body.allowed_mcp !== undefined && { allowedMcp: body.allowed_mcp }),
    ...(body.expires_at !== undefined && { expiresAt: body.expires_at === null ? null : Date.parse(body.expires_at) }),
    ...(body.period !== undefined && { period: body.period }),
    ...(body.period_budget_usd !== undefined && { periodBudget: body.period_budget_usd }),
    ...(body.period_token_cap !== undefined && { periodTokenCap: body.period_token_cap }),
    ...(body.guardrails !== undefined && { guardrails: body.guardrails }),
    ...(body.default_tags !== undefined && { defaultTags: body.default_tags }),
  };
}

/** The policy change checked against the catalogue and the tier of the key's account. */
export async function checkedPolicy(ctx: RouteContext, config: GatewayConfig, accountId: string, change: KeyPolicyChange, current: ApiKey | null): Promise<KeyPolicyChange> {
  const account = await ctx.store.accounts.get(accountId);
  if (!account) throw new GatewayError("account_not_found", `No account ${accountId}.`, { param: "account_id" });
  return validateKeyPolicy(change, { config, tier: account.tier, now: ctx.pipeline.authCache.now(), current });
}
