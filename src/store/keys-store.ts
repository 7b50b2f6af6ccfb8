// API sub-keys: minting (at most 50 enabled per account), lookup by hash, caps, revoke.
import { limitsColumn, subjectLimitsOf, type SubjectLimits, type SubjectLimitsInput } from "../core/traffic-limits.js";
import type { Kysely, Selectable, Transaction, Updateable } from "kysely";
import { mintApiKey } from "../core/api-keys.js";
import { GatewayError } from "../errors/catalogue.js";
import { newId, nowMs } from "../core/ids.js";
import type { Nano } from "../core/money.js";
import type { KeyPeriod } from "./tables.js";
import { toAccount, type Account } from "./accounts-store.js";
import { recordAuthChange } from "./auth-events.js";
import type { Database, KeyStatus, KeysTable } from "./tables.js";
import { transact } from "./transact.js";
import { toWorkspacePolicy } from "./workspace-budgets-store.js";
import type { WorkspacePolicy } from "../core/budget-scopes.js";
import type { Tags } from "../core/request-tags.js";

/** A change of a key's policy: undefined leaves a field as it is, null removes the restriction. */
export interface KeyPolicyChange {
  allowedModels?: string[] | null;
  /** MCP servers and tools (core/mcp-names.ts); null: every one. */
  allowedMcp?: string[] | null;
  allowedNetworks?: string[] | null;
  expiresAt?: number | null;
  period?: KeyPeriod | null;
  periodBudget?: Nano | null;
  periodTokenCap?: number | null;
  /** The `selected` guardrails the key switches on; null or [] removes them. */
  guardrails?: string[] | null;
  defaultTags?: Tags | null;
}

export interface KeyPolicy {
  allowedModels: string[] | null;
  allowedMcp: string[] | null;
  allowedNetworks: string[] | null;
  expiresAt: number | null;
  period: KeyPeriod | null;
  periodBudget: Nano | null;
  periodTokenCap: number | null;
  /** The `selected` guardrails (config file) the key switches on; []: none. */
  guardrails: string[];
  /** Tags every request of the key carries (core/request-tags.ts; a default wins over the request's); null: none. */
  defaultTags: Tags | null;
}

export const MAX_ENABLED_KEYS_PER_ACCOUNT = 50;

export interface ApiKey extends KeyPolicy {
  id: string;
  accountId: string;
  workspaceId: string | null;
  name: string;
  prefix: string;
  hash: string;
  status: KeyStatus;
  budgetCap: Nano | null;
  spent: Nano;
  tokenCap: number | null;
  tokensUsed: number;
  held: Nano;
  heldTokens: number;
  /** Clamping allowed for this key (docs/billing.md, "Clamping"); the account's setting must allow it too. */
  clampOutput: boolean;
  /** Start (epoch ms) of the period the periodic counters belong to (see currentPeriodUse in billing/key-period.ts). */
  periodStartedAt: number;
  periodSpent: Nano;
  periodTokensUsed: number;
  /** The key's own rate and concurrency limits (src/core/traffic-limits.ts); null: only the tier's. */
  limits: SubjectLimits | null;
  createdAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

export interface KeyCaps {
  budgetCap?: Nano | null;
  tokenCap?: number | null;
}

export function toApiKey(row: Selectable<KeysTable>): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    workspaceId: row.workspace_id,
    name: row.name,
    prefix: row.prefix,
    hash: row.hash,
    status: row.status,
    budgetCap: row.budget_cap_nano === null ? null : BigInt(row.budget_cap_nano),
    spent: BigInt(row.spent_nano),
    tokenCap: row.token_cap === null ? null : Number(row.token_cap),
    tokensUsed: Number(row.tokens_used),
    held: BigInt(row.held_nano),
    heldTokens: Number(row.held_tokens),
    clampOutput: row.clamp_output !== 0n,
    allowedModels: jsonList(row.allowed_models),
    allowedNetworks: jsonList(row.allowed_networks),
    allowedMcp: jsonList(row.allowed_mcp),
    expiresAt: row.expires_at == null ? null : Number(row.expires_at),
    period: row.period ?? null,
    periodBudget: row.period_budget_nano == null ? null : BigInt(row.period_budget_nano),
    periodTokenCap: row.period_token_cap == null ? null : Number(row.period_token_cap),
    periodStartedAt: Number(row.period_started_at ?? 0),
    periodSpent: BigInt(row.period_spent_nano ?? 0),
    periodTokensUsed: Number(row.period_tokens_used ?? 0),
    limits: subjectLimitsOf(row.limits),
    guardrails: jsonList(row.guardrails) ?? [],
    defaultTags: tagsColumn(row.default_tags),
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
    lastUsedAt: row.last_used_at === null ? null : Number(row.last_used_at),
  };
}

function tagsColumn(text: string | null | undefined): Tags | null {
  if (text == null) return null;
  const value: unknown = JSON.parse(text);
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

function jsonList(text: string | null | undefined): string[] | null {
  if (text == null) return null;
  const value: unknown = JSON.parse(text);
  return Array.isArray(value) ? value.map(String) : null;
}

/** A list of guardrail names as stored (keys and workspaces): null when empty. */
export function guardrailsColumn(names: readonly string[] | null): string | null {
  return names === null || names.length === 0 ? null : JSON.stringify(names);
}

/** The columns a policy change writes; a change of period starts its counters afresh. */
export function policyColumns(change: KeyPolicyChange, current: Pick<ApiKey, "period"> | null) {
  return {
    ...(change.allowedModels !== undefined && { allowed_models: change.allowedModels === null ? null : JSON.stringify(change.allowedModels) }),
    ...(change.allowedMcp !== undefined && { allowed_mcp: change.allowedMcp === null ? null : JSON.stringify(change.allowedMcp) }),
    ...(change.allowedNetworks !== undefined && { allowed_networks: change.allowedNetworks === null ? null : JSON.stringify(change.allowedNetworks) }),
    ...(change.expiresAt !== undefined && { expires_at: change.expiresAt === null ? null : BigInt(change.expiresAt) }),
    ...(change.period !== undefined && { period: change.period }),
    ...(change.periodBudget !== undefined && { period_budget_nano: change.periodBudget }),
    ...(change.periodTokenCap !== undefined && { period_token_cap: change.periodTokenCap === null ? null : BigInt(change.periodTokenCap) }),
    ...(change.guardrails !== undefined && { guardrails: guardrailsColumn(change.guardrails) }),
    ...(change.defaultTags !== undefined && { default_tags: change.defaultTags === null ? null : JSON.stringify(change.defaultTags) }),
    ...(change.period !== undefined && change.period !== (current?.period ?? null) && { period_started_at: 0n, period_spent_nano: 0n, period_tokens_used: 0n }),
  };
}

/** Appends a key's caps as they now are to key_allocations (history: kept after the key is deleted). */
export async function recordAllocation(trx: Transaction<Database>, key: Selectable<KeysTable>, reason: string, actorAccountId: string | null): Promise<void> {
  await trx
    .insertInto("key_allocations")
    .values({
      key_id: key.id,
      account_id: key.account_id,
      budget_cap_nano: key.budget_cap_nano,
      token_cap: key.token_cap,
      reason,
      actor_account_id: actorAccountId,
      created_at: nowMs(),
    })
    .execute();
}

/** Locks the account row for the rest of the transaction (PostgreSQL row lock; SQLite write lock). */
export async function lockAccount(trx: Transaction<Database>, accountId: string): Promise<boolean> {
  const result = await trx
    .updateTable("accounts")
    .set((eb) => ({ updated_at: eb.ref("updated_at") }))
    .where("id", "=", accountId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export class KeysStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Mints a key; the raw value is returned only here. */
  async create(
    input: {
      accountId: string;
      name?: string;
      workspaceId?: string | null;
      actorAccountId?: string | null;
      clampOutput?: boolean;
      policy?: KeyPolicyChange;
      /** The key's own rate and concurrency limits (src/core/traffic-limits.ts); absent or null: the tier's. */
      limits?: SubjectLimitsInput | null;
    } & KeyCaps,
  ): Promise<{ key: ApiKey; raw: string }> {
    const minted = mintApiKey();
    const now = nowMs();
    const key = await transact(this.db, async (trx) => {
      if (!(await lockAccount(trx, input.accountId))) throw new GatewayError("account_not_found", `no account ${input.accountId}`);
      const enabled = await trx
        .selectFrom("keys")
        .select((eb) => eb.fn.countAll<bigint>().as("n"))
        .where("account_id", "=", input.accountId)
        .where("status", "=", "enabled")
        .executeTakeFirstOrThrow();
      if (Number(enabled.n) >= MAX_ENABLED_KEYS_PER_ACCOUNT) throw new GatewayError("sub_key_limit_reached");
      const row = await trx
        .insertInto("keys")
        .values({
          id: newId("key"),
          account_id: input.accountId,
          workspace_id: input.workspaceId ?? null,
          name: input.name ?? "",
          prefix: minted.display,
          hash: minted.hash,
          status: "enabled",
          budget_cap_nano: input.budgetCap ?? null,
          spent_nano: 0n,
          token_cap: input.tokenCap == null ? null : BigInt(input.tokenCap),
          tokens_used: 0n,
          held_nano: 0n,
          held_tokens: 0n,
          // Only when turned off: on is the column's default (and a database migrated only part way has no such column).
          ...(input.clampOutput === false && { clamp_output: 0n }),
          // Only what is set: a database migrated only part way has no policy columns.
          ...(input.policy && policyColumns(input.policy, null)),
          ...(input.limits != null && { limits: limitsColumn(input.limits) }),
          created_at: now,
          updated_at: now,
          revoked_at: null,
          last_used_at: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      await recordAllocation(trx, row, "created", input.actorAccountId ?? null);
      return toApiKey(row);
    });
    return { key, raw: minted.raw };
  }

  async get(id: string): Promise<ApiKey | null> {
    const row = await this.db.selectFrom("keys").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toApiKey(row) : null;
  }

  async listByAccount(accountId: string): Promise<ApiKey[]> {
    const rows = await this.db.selectFrom("keys").selectAll().where("account_id", "=", accountId).orderBy("created_at").orderBy("id").execute();
    return rows.map(toApiKey);
  }

  /** The authentication lookup: a key, its owning account and, for a key tagged with one, its workspace's policy (budgets, models). */
  async findByHash(hash: string): Promise<{ key: ApiKey; account: Account; workspace: WorkspacePolicy | null } | null> {
    const key = await this.db.selectFrom("keys").selectAll().where("hash", "=", hash).executeTakeFirst();
    if (!key) return null;
    const account = await this.db.selectFrom("accounts").selectAll().where("id", "=", key.account_id).executeTakeFirstOrThrow();
    const workspace = key.workspace_id === null ? undefined : await this.db.selectFrom("workspaces").selectAll().where("id", "=", key.workspace_id).executeTakeFirst();
    return { key: toApiKey(key), account: toAccount(account), workspace: workspace ? toWorkspacePolicy(workspace) : null };
  }

  /** enabled or exhausted -> revoked; revoking a revoked key changes nothing. */
  async revoke(id: string): Promise<ApiKey> {
    return transact(this.db, async (trx) => {
      const now = nowMs();
      const row = await trx
        .updateTable("keys")
        .set({ status: "revoked", revoked_at: now, updated_at: now })
        .where("id", "=", id)
        .where("status", "!=", "revoked")
        .returningAll()
        .executeTakeFirst();
      const current = row ?? (await trx.selectFrom("keys").selectAll().where("id", "=", id).executeTakeFirst());
      if (!current) throw new GatewayError("not_found", `no key ${id}`);
      if (row) await recordAuthChange(trx, { keyHash: row.hash });
      return toApiKey(current);
    });
  }
  /** Keys tagged with a workspace (any member's), for the workspace's shared view. */
  async listByWorkspace(workspaceId: string): Promise<ApiKey[]> {
    const rows = await this.db.selectFrom("keys").selectAll().where("workspace_id", "=", workspaceId).orderBy("created_at").orderBy("id").execute();
    return rows.map(toApiKey);
  }

  /**
   * The enable route: enabled stays enabled (a no-op), revoked and exhausted are refused with
   * conflict. A revoked key is never re-enabled; an exhausted key regains capacity through its caps.
   */
  async enable(id: string): Promise<ApiKey> {
    const row = await this.db.selectFrom("keys").selectAll().where("id", "=", id).executeTakeFirst();
    if (!row) throw new GatewayError("not_found", `no key ${id}`);
    if (row.status === "revoked") throw new GatewayError("conflict", "A revoked key is never re-enabled; create a new key instead.");
    if (row.status === "exhausted") throw new GatewayError("conflict", "An exhausted key cannot be enabled; raise or remove its caps instead.");
    return toApiKey(row);
  }

  /** Turns output clamping on or off for one key (docs/billing.md, "Clamping"); a revoked key keeps its setting. */
  async setClampOutput(id: string, clampOutput: boolean): Promise<ApiKey> {
    return this.#changeSettings(id, () => ({ clamp_output: clampOutput ? 1n : 0n }));
  }

  /** Sets (null: removes) the key's own rate and concurrency limits. */
  async setLimits(id: string, limits: SubjectLimitsInput | null): Promise<ApiKey> {
    return this.#changeSettings(id, () => ({ limits: limitsColumn(limits) }));
  }

  /** Changes a key's policy (validated by the caller: validateKeyPolicy); a change of period starts its counters afresh. */
  async setPolicy(id: string, change: KeyPolicyChange): Promise<ApiKey> {
    return this.#changeSettings(id, (current) => policyColumns(change, { period: current.period ?? null }));
  }

  /**
   * Writes the columns `columnsFor` derives from the key's current row, unless the key is revoked
   * (invalid_state) or missing (not_found). The settings travel with the cached key (limits, policy)
   * or are shown from it (GET /v1/me): every process drops its copy through auth_events. Admission
   * reads the caps and the periodic budget from the row itself.
   */
  async #changeSettings(id: string, columnsFor: (current: Selectable<KeysTable>) => Updateable<KeysTable>): Promise<ApiKey> {
    return transact(this.db, async (trx) => {
      const current = await trx.selectFrom("keys").selectAll().where("id", "=", id).executeTakeFirst();
      if (!current) throw new GatewayError("not_found", `no key ${id}`);
      if (current.status === "revoked") throw new GatewayError("invalid_state", "a revoked key's settings cannot be changed");
      const row = await trx
        .updateTable("keys")
        .set({ ...columnsFor(current), updated_at: nowMs() })
        .where("id", "=", id)
        .where("status", "!=", "revoked")
        .returningAll()
        .executeTakeFirst();
      if (!row) throw new GatewayError("invalid_state", "a revoked key's settings cannot be changed");
      await recordAuthChange(trx, { keyHash: row.hash });
      return toApiKey(row);
    });
  }

  /**
   * Removes a revoked key's row (its key_allocations and ledger rows stay: they are history).
   * Anything else, or a key with a request still holding funds, is refused with invalid_state and
   * nothing changes: the status guard sits in the DELETE itself, so a concurrent change cannot slip in.
   */
  async deletePermanently(id: string): Promise<ApiKey> {
    return transact(this.db, async (trx) => {
      const current = await trx.selectFrom("keys").selectAll().where("id", "=", id).executeTakeFirst();
      if (!current) throw new GatewayError("not_found", `no key ${id}`);
      if (current.status !== "revoked") {
        throw new GatewayError("invalid_state", `The key is ${current.status}; revoke it before deleting it permanently.`);
      }
      const inFlight = await trx.selectFrom("holds").select("id").where("key_id", "=", id).limit(1).executeTakeFirst();
      if (inFlight) throw new GatewayError("invalid_state", "A request under this key is still in flight; try again in a minute.");
      const deleted = await trx.deleteFrom("keys").where("id", "=", id).where("status", "=", "revoked").executeTakeFirst();
      if (deleted.numDeletedRows === 0n) throw new GatewayError("invalid_state", "The key changed state; reload and try again.");
      await recordAuthChange(trx, { keyHash: current.hash });
      return toApiKey(current);
    });
  }
}
