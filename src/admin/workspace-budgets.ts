// A workspace's budgets and models (ADR 0037), set by administrators through the admin API and by the
// workspace's owners and admins on the dashboard: one validation, one audited change, one view.
import { z } from "zod";
import { budgetUseJson } from "../billing/budget-view.js";
import { nextMonthStart } from "../billing/admission.js";
import type { WorkspacePolicy } from "../core/budget-scopes.js";
import { monthOf } from "../core/ids.js";
import { formatUsd, MAX_BALANCE } from "../core/money.js";
import type { GatewayConfig } from "../config/load.js";
import { GatewayError } from "../errors/catalogue.js";
import type { AuditActor, AuditFields } from "../store/audit-store.js";
import type { Store } from "../store/index.js";
import type { WorkspacePolicyChange } from "../store/workspace-budgets-store.js";
import { tokenCount, usd } from "./routes/route.js";
import { checkedGuardrailNames, MAX_ALLOWED_MODELS, validMcpAllowlist } from "../accounts/key-policy.js";
import { MAX_SELECTED_GUARDRAILS } from "../core/guardrails/guardrail.js";
import { MAX_MCP_ALLOWLIST } from "../core/mcp-names.js";
import { decodeCursor, encodeCursor } from "./views.js";

/** A budget at most the largest total spend an account may reach (999,999,999.99 USD). */
const MAX_BUDGET = MAX_BALANCE * 1000n;

/** PATCH …/budgets: each field optional; null removes that limit (allowed_models null: every model of the tier). */
export const workspaceBudgetsBody = z
  .object({
    monthly_budget_usd: usd(MAX_BUDGET).nullable().optional(),
    monthly_token_budget: tokenCount.nullable().optional(),
    member_monthly_budget_usd: usd(MAX_BUDGET).nullable().optional(),
    allowed_models: z.array(z.string().min(1).max(256)).min(1).max(MAX_ALLOWED_MODELS).nullable().optional(),
    /** Guardrail names from the config file (applies: selected) the workspace's keys get; null or [] removes them. */
    guardrails: z.array(z.string().min(1).max(64)).max(MAX_SELECTED_GUARDRAILS).nullable().optional(),
    /** MCP servers and tools the workspace's keys may use (null: every one; a key's own list narrows it further). */
    allowed_mcp: z.array(z.string().min(1).max(200)).min(1).max(MAX_MCP_ALLOWLIST).nullable().optional(),
  })
  .strict();

export type WorkspaceBudgetsBody = z.infer<typeof workspaceBudgetsBody>;

/** The change a body asks for, with the models checked against the catalogue and de-duplicated. */
export function policyChange(body: WorkspaceBudgetsBody, config: Pick<GatewayConfig, "models" | "guardrails">): WorkspacePolicyChange {
  const change: WorkspacePolicyChange = {};
  if (body.monthly_budget_usd !== undefined) change.monthlyBudget = body.monthly_budget_usd;
  if (body.monthly_token_budget !== undefined) change.monthlyTokenBudget = body.monthly_token_budget === null ? null : BigInt(body.monthly_token_budget);
  if (body.member_monthly_budget_usd !== undefined) change.memberMonthlyBudget = body.member_monthly_budget_usd;
  if (body.allowed_models !== undefined) {
    if (body.allowed_models !== null) {
      for (const id of body.allowed_models) {
        if (!config.models.has(id)) throw new GatewayError("invalid_request", `allowed_models: the model ${id} does not exist`, { param: "allowed_models" });
      }
    }
    change.allowedModels = body.allowed_models === null ? null : [...new Set(body.allowed_models)];
  }
  if (body.guardrails !== undefined) change.guardrails = checkedGuardrailNames(body.guardrails, config);
  if (body.allowed_mcp !== undefined) change.allowedMcp = body.allowed_mcp === null ? null : validMcpAllowlist(body.allowed_mcp, "allowed_mcp");
  return change;
}

function auditFields(p: WorkspacePolicy): AuditFields {
  return {
    monthly_budget_usd: p.monthlyBudget === null ? null : formatUsd(p.monthlyBudget),
    monthly_token_budget: p.monthlyTokenBudget === null ? null : Number(p.monthlyTokenBudget),
    member_monthly_budget_usd: p.memberMonthlyBudget === null ? null : formatUsd(p.memberMonthlyBudget),
    allowed_models: p.allowedModels,
    guardrails: p.guardrails,
    allowed_mcp: p.allowedMcp ?? null,
  };
}

/** Applies the change and records it (action workspace.budgets, before and after) in one transaction. */
export async function setWorkspaceBudgets(store: Store, actor: AuditActor, workspaceId: string, change: WorkspacePolicyChange): Promise<WorkspacePolicy> {
  return store.audited(actor, async (tx) => {
    const { before, after } = await tx.workspaceBudgets.setPolicy(workspaceId, change);
    await tx.record({ action: "workspace.budgets", targetType: "workspace", targetId: workspaceId, before: auditFields(before), after: auditFields(after) });
    return after;
  });
}

/** The workspace's budgets and models with this month's use: the workspace's and each member's. */
export async function workspaceBudgetsView(store: Store, workspaceId: string, now = Date.now()) {
  const policy = await store.workspaceBudgets.policy(workspaceId);
  if (policy === null) throw new GatewayError("not_found", `No workspace ${workspaceId}.`);
  const members = await store.workspaces.members(workspaceId);
  const month = monthOf(now);
  const use = await store.workspaceBudgets.usage(
    policy,
    members.map((m) => m.accountId),
    month,
  );
  return {
    workspace_id: policy.id,
    name: policy.name,
    month,
    resets_at: nextMonthStart(month),
    allowed_models: policy.allowedModels,
    guardrails: policy.guardrails,
    allowed_mcp: policy.allowedMcp ?? null,
    member_monthly_budget_usd: policy.memberMonthlyBudget === null ? null : formatUsd(policy.memberMonthlyBudget),
    budget: budgetUseJson(use.workspace),
    members: members.map((m) => ({ account_id: m.accountId, email: m.email, role: m.role, budget: budgetUseJson(use.members.get(m.accountId)!) })),
  };
}

/** Every workspace, a page at a time (the admin API's and the dashboard's administration list). */
export const workspaceListQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(100), cursor: z.string().min(1).max(400).optional() });

/**
 * A page of every workspace, oldest first, each with its budgets, this month's spend and held, what
 * is left and its member count; `next_cursor` continues the list (null on the last page).
 */
export async function workspaceListView(store: Store, query: z.infer<typeof workspaceListQuery>, now = Date.now()) {
  const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor, 2);
  if (after && !/^\d{1,16}$/.test(after[0]!)) throw new GatewayError("invalid_request", "cursor is not a cursor this API returned", { param: "cursor" });
  const month = monthOf(now);
  const rows = await store.workspaceBudgets.page({ limit: query.limit + 1, month, ...(after && { after: { createdAt: BigInt(after[0]!), id: after[1]! } }) });
  const page = rows.slice(0, query.limit);
  const last = page.at(-1);
  const more = rows.length > query.limit && last !== undefined;
  return {
    object: "list",
    month,
    resets_at: nextMonthStart(month),
    data: page.map((w) => ({
      id: w.policy.id,
      name: w.policy.name,
      created_at: new Date(w.createdAt).toISOString(),
      members: w.members,
      allowed_models: w.policy.allowedModels,
      guardrails: w.policy.guardrails,
      allowed_mcp: w.policy.allowedMcp ?? null,
      member_monthly_budget_usd: w.policy.memberMonthlyBudget === null ? null : formatUsd(w.policy.memberMonthlyBudget),
      budget: budgetUseJson(w.use),
    })),
    has_more: more,
    next_cursor: more ? encodeCursor([String(last.createdAt), last.policy.id]) : null,
  };
}
