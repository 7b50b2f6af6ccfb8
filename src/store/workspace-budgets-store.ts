// A workspace's money and models (ADR 0037): its monthly budgets, each member's monthly budget and the
// models its keys may use (migration 0029), and what each budget scope has used this month. The
// limits travel with the cached key (pipeline/auth-cache.ts); a change drops every key of the workspace
// from every process's cache through auth_events, in the change's transaction.
import type { Kysely, Selectable } from "kysely";
import { memberScope, usedIn, workspaceScope, type WorkspacePolicy } from "../core/budget-scopes.js";
import type { Nano } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";
import { recordAuthChange } from "./auth-events.js";
import type { Database, WorkspacesTable } from "./tables.js";
import { transact } from "./transact.js";

/** A change of a workspace's policy: undefined leaves a field as it is, null removes the limit. */
export interface WorkspacePolicyChange {
  monthlyBudget?: Nano | null;
  monthlyTokenBudget?: bigint | null;
  memberMonthlyBudget?: Nano | null;
  allowedModels?: string[] | null;
  /** null or [] removes them. */
  guardrails?: string[] | null;
  allowedMcp?: string[] | null;
}

/** One workspace of the administrators' list: its policy, member count and its own budget's use this month. */
export interface WorkspaceSummary {
  policy: WorkspacePolicy;
  createdAt: number;
  members: number;
  use: BudgetUse;
}

/** What a budget scope has used in a month and holds now; the limit null when that figure is not limited. */
export interface BudgetUse {
  scope: string;
  limit: Nano | null;
  tokenLimit: bigint | null;
  spent: Nano;
  tokens: bigint;
  held: Nano;
  heldTokens: bigint;
}

export function toWorkspacePolicy(row: Selectable<WorkspacesTable>): WorkspacePolicy {
  const big = (value: bigint | number | null): bigint | null => (value === null ? null : BigInt(value));
  return {
    id: row.id,
    name: row.name,
    monthlyBudget: big(row.monthly_budget_nano),
    monthlyTokenBudget: big(row.monthly_token_budget),
    memberMonthlyBudget: big(row.member_monthly_budget_nano),
    allowedModels: row.allowed_models === null ? null : (JSON.parse(row.allowed_models) as string[]),
    guardrails: row.guardrails == null ? [] : (JSON.parse(row.guardrails) as string[]),
    allowedMcp: row.allowed_mcp == null ? null : (JSON.parse(row.allowed_mcp) as string[]),
  };
}

export class WorkspaceBudgetsStore {
  constructor(private readonly db: Kysely<Database>) {}

  async policy(workspaceId: string): Promise<WorkspacePolicy | null> {
    const row = await this.db.selectFrom("workspaces").selectAll().where("id", "=", workspaceId).executeTakeFirst();
    return row ? toWorkspacePolicy(row) : null;
  }

  /** Applies a change; returns the policy before and after. Every key tagged with the workspace is dropped from the auth caches. */
  setPolicy(workspaceId: string, change: WorkspacePolicyChange): Promise<{ before: WorkspacePolicy; after: WorkspacePolicy }> {
    return transact(this.db, async (trx) => {
      // Locks the row first (a write: SQLite has no FOR UPDATE), so that `before` is what this change replaces.
      const locked = await trx
        .updateTable("workspaces")
        .set((eb) => ({ name: eb.ref("name") }))
        .where("id", "=", workspaceId)
        .executeTakeFirst();
      const current = locked.numUpdatedRows > 0n ? await trx.selectFrom("workspaces").selectAll().where("id", "=", workspaceId).executeTakeFirst() : undefined;
      if (!current) throw new GatewayError("not_found", `no workspace ${workspaceId}`);
      const row = await trx
        .updateTable("workspaces")
        .set({
          ...(change.monthlyBudget !== undefined && { monthly_budget_nano: change.monthlyBudget }),
          ...(change.monthlyTokenBudget !== undefined && { monthly_token_budget: change.monthlyTokenBudget }),
          ...(change.memberMonthlyBudget !== undefined && { member_monthly_budget_nano: change.memberMonthlyBudget }),
          ...(change.allowedModels !== undefined && { allowed_models: change.allowedModels === null ? null : JSON.stringify(change.allowedModels) }),
          ...(change.guardrails !== undefined && { guardrails: change.guardrails === null || change.guardrails.length === 0 ? null : JSON.stringify(change.guardrails) }),
          ...(change.allowedMcp !== undefined && { allowed_mcp: change.allowedMcp === null ? null : JSON.stringify(change.allowedMcp) }),
        })
        .where("id", "=", workspaceId)
        .returningAll()
        .executeTakeFirstOrThrow();
      const keys = await trx.selectFrom("keys").select("hash").where("workspace_id", "=", workspaceId).where("status", "!=", "revoked").execute();
      for (const key of keys) await recordAuthChange(trx, { keyHash: key.hash });
      return { before: toWorkspacePolicy(current), after: toWorkspacePolicy(row) };
    });
  }

  /** The workspace's budget and its members' (every member, spent or not) for `month` ("YYYY-MM"). */
  async usage(policy: WorkspacePolicy, memberIds: readonly string[], month: string): Promise<{ workspace: BudgetUse; members: Map<string, BudgetUse> }> {
    const scopes = [workspaceScope(policy.id), ...memberIds.map((id) => memberScope(policy.id, id))];
    const use = await this.#uses(scopes, month);
    return {
      workspace: use(workspaceScope(policy.id), policy.monthlyBudget, policy.monthlyTokenBudget),
      members: new Map(memberIds.map((id) => [id, use(memberScope(policy.id, id), policy.memberMonthlyBudget, null)])),
    };
  }

  /**
   * Every workspace, oldest first, `limit` of them after the (created_at, id) `after`: the
   * administrators' list, each with its member count and its budget's use in `month`.
   */
  async page(options: { limit: number; month: string; after?: { createdAt: bigint; id: string } }): Promise<WorkspaceSummary[]> {
    let query = this.db
      .selectFrom("workspaces")
      .selectAll("workspaces")
      .select((eb) =>
        eb
          .selectFrom("memberships")
          .select((e) => e.fn.countAll<bigint>().as("n"))
          .whereRef("memberships.workspace_id", "=", "workspaces.id")
          .as("member_count"),
      )
      .orderBy("workspaces.created_at")
      .orderBy("workspaces.id")
      .limit(options.limit);
    const after = options.after;
    if (after) {
      query = query.where((eb) =>
        eb.or([eb("workspaces.created_at", ">", after.createdAt), eb.and([eb("workspaces.created_at", "=", after.createdAt), eb("workspaces.id", ">", after.id)])]),
      );
    }
    const rows = await query.execute();
    const use = await this.#uses(
      rows.map((r) => workspaceScope(r.id)),
      options.month,
    );
    return rows.map((row) => {
      const policy = toWorkspacePolicy(row);
      return {
        policy,
        createdAt: Number(row.created_at),
        members: Number(row.member_count ?? 0n),
        use: use(workspaceScope(policy.id), policy.monthlyBudget, policy.monthlyTokenBudget),
      };
    });
  }

  /** Reads the counters of `scopes` once; the function answers each scope's use in `month` (0 for a scope never used). */
  async #uses(scopes: readonly string[], month: string): Promise<(scope: string, limit: Nano | null, tokenLimit: bigint | null) => BudgetUse> {
    const rows = scopes.length === 0 ? [] : await this.db.selectFrom("budget_usage").selectAll().where("scope", "in", scopes).execute();
    const byScope = new Map(rows.map((r) => [r.scope, r]));
    return (scope, limit, tokenLimit) => {
      const row = byScope.get(scope);
      const counters = row && { month: row.month, cost: BigInt(row.cost_nano), tokens: BigInt(row.tokens), held: BigInt(row.held_nano), heldTokens: BigInt(row.held_tokens) };
      const used = usedIn(counters, month);
      return { scope, limit, tokenLimit, spent: used.cost, tokens: used.tokens, held: counters?.held ?? 0n, heldTokens: counters?.heldTokens ?? 0n };
    };
  }
}
