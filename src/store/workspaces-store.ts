// Workspaces, memberships and invites. Every write is ONE transaction: it either lands whole or
// leaves nothing behind, and any failure that is not a domain refusal becomes workspace_write_failed
// (500, safe to retry). Role policy (who may do what) is the dashboard's; this module keeps the
// invariants that must hold whoever asks (one owner per workspace, single-use invites).
import { createHash, randomBytes } from "node:crypto";
import type { Kysely, Transaction } from "kysely";
import { newId, nowMs } from "../core/ids.js";
import { GatewayError } from "../errors/catalogue.js";
import { dbErrorKind } from "./db-errors.js";
import type { Database, Role } from "./tables.js";
import { transact } from "./transact.js";

export const DEFAULT_INVITE_TTL_MS = 7 * 24 * 60 * 60_000;
export type InviteRole = Exclude<Role, "owner">;

export interface Workspace {
  id: string;
  name: string;
  createdBy: string;
  createdAt: number;
}

export interface Member {
  accountId: string;
  email: string;
  role: Role;
  joinedAt: number;
}

export interface Invite {
  id: string;
  workspaceId: string;
  role: InviteRole;
  createdBy: string;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  usedBy: string | null;
}

export interface WorkspacesStoreOptions {
  /**
   * Test hook: the name of a step ("create:workspace", "accept:invite", ...) after which the next
   * write throws, to prove that the transaction leaves no partial change. Also settable later.
   */
  failAfter?: string | null;
}

type Trx = Transaction<Database>;
type Checkpoint = (step: string) => void;

function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

function toInvite(row: {
  id: string;
  workspace_id: string;
  role: InviteRole;
  created_by: string;
  created_at: bigint;
  expires_at: bigint;
  used_at: bigint | null;
  used_by: string | null;
}): Invite {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    role: row.role,
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
    usedBy: row.used_by,
  };
}

export class WorkspacesStore {
  failAfter: string | null;

  constructor(
    private readonly db: Kysely<Database>,
    options: WorkspacesStoreOptions = {},
  ) {
    this.failAfter = options.failAfter ?? null;
  }

  /** Creates a workspace with its creator as the owner. */
  create(name: string, ownerAccountId: string): Promise<Workspace> {
    return this.#write("create", async (trx, step) => {
      const now = nowMs();
      const row = await trx
        .insertInto("workspaces")
        .values({ id: newId("ws"), name, created_by: ownerAccountId, created_at: now })
        .returningAll()
        .executeTakeFirstOrThrow();
      step("workspace");
      await trx.insertInto("memberships").values({ workspace_id: row.id, account_id: ownerAccountId, role: "owner", created_at: now }).execute();
      step("membership");
      return { id: row.id, name: row.name, createdBy: row.created_by, createdAt: Number(row.created_at) };
    });
  }

  async get(id: string): Promise<Workspace | null> {
    const row = await this.db.selectFrom("workspaces").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? { id: row.id, name: row.name, createdBy: row.created_by, createdAt: Number(row.created_at) } : null;
  }

  /** The workspaces an account belongs to, with its role and the member count. */
  async listForAccount(accountId: string): Promise<Array<Workspace & { role: Role; members: number }>> {
    const rows = await this.db
      .selectFrom("memberships as mine")
      .innerJoin("workspaces", "workspaces.id", "mine.workspace_id")
      .select(["workspaces.id", "workspaces.name", "workspaces.created_by", "workspaces.created_at", "mine.role"])
      .select((eb) =>
        eb
          .selectFrom("memberships as all")
          .select((e) => e.fn.countAll<bigint>().as("n"))
          .whereRef("all.workspace_id", "=", "workspaces.id")
          .as("members"),
      )
      .where("mine.account_id", "=", accountId)
      .orderBy("workspaces.created_at")
      .orderBy("workspaces.id")
      .execute();
    return rows.map((r) => ({ id: r.id, name: r.name, createdBy: r.created_by, createdAt: Number(r.created_at), role: r.role, members: Number(r.members ?? 0n) }));
  }

  async roleOf(workspaceId: string, accountId: string): Promise<Role | null> {
    const row = await this.db.selectFrom("memberships").select("role").where("workspace_id", "=", workspaceId).where("account_id", "=", accountId).executeTakeFirst();
    return row?.role ?? null;
  }

  async members(workspaceId: string): Promise<Member[]> {
    const rows = await this.db
      .selectFrom("memberships")
      .innerJoin("accounts", "accounts.id", "memberships.account_id")
      .select(["memberships.account_id", "accounts.email", "memberships.role", "memberships.created_at"])
      .where("memberships.workspace_id", "=", workspaceId)
      .orderBy("memberships.created_at")
      .orderBy("accounts.email")
      .execute();
    return rows.map((r) => ({ accountId: r.account_id, email: r.email, role: r.role, joinedAt: Number(r.created_at) }));
  }

  /** Makes an account a member with a role (company sign-in's group map); not_found for a missing workspace. */
  addMember(workspaceId: string, accountId: string, role: InviteRole, now = Date.now()): Promise<Member> {
    return this.#write("add-member", async (trx, step) => {
      const workspace = await trx.selectFrom("workspaces").select("id").where("id", "=", workspaceId).executeTakeFirst();
      if (!workspace) throw new GatewayError("not_found", `no workspace ${workspaceId}`);
      try {
        await trx
          .insertInto("memberships")
          .values({ workspace_id: workspaceId, account_id: accountId, role, created_at: BigInt(now) })
          .execute();
      } catch (error) {
        if (dbErrorKind(error) === "unique") throw new GatewayError("already_member");
        throw error;
      }
      step("membership");
      return this.#membership(trx, workspaceId, accountId);
    });
  }

  /** Changes a member's role between admin and member; the owner's role is fixed. */
  setRole(workspaceId: string, accountId: string, role: InviteRole): Promise<Member> {
    return this.#write("set-role", async (trx, step) => {
      const current = await this.#membership(trx, workspaceId, accountId);
      if (current.role === "owner") throw new GatewayError("invalid_state", "The owner's role cannot be changed.");
      await trx.updateTable("memberships").set({ role }).where("workspace_id", "=", workspaceId).where("account_id", "=", accountId).execute();
      step("membership");
      return { ...current, role };
    });
  }

  /** Removes a member (or lets one leave); the owner cannot be removed. */
  removeMember(workspaceId: string, accountId: string): Promise<void> {
    return this.#write("remove-member", async (trx, step) => {
      const current = await this.#membership(trx, workspaceId, accountId);
      if (current.role === "owner") throw new GatewayError("invalid_state", "The owner cannot leave or be removed from the workspace.");
      await trx.deleteFrom("memberships").where("workspace_id", "=", workspaceId).where("account_id", "=", accountId).execute();
      step("membership");
    });
  }

  /** A single-use invite; the raw token is returned only here (only its hash is stored). */
  createInvite(input: { workspaceId: string; role: InviteRole; createdBy: string; ttlMs?: number; now?: number }): Promise<{ invite: Invite; token: string }> {
    return this.#write("invite", async (trx, step) => {
      const token = `inv_${randomBytes(24).toString("base64url")}`;
      const now = input.now ?? Date.now();
      const row = await trx
        .insertInto("invites")
        .values({
          id: newId("invite"),
          workspace_id: input.workspaceId,
          token_hash: hashToken(token),
          role: input.role,
          email: null,
          created_by: input.createdBy,
          created_at: BigInt(now),
          expires_at: BigInt(now + (input.ttlMs ?? DEFAULT_INVITE_TTL_MS)),
          used_at: null,
          used_by: null,
        })
        .returningAll()
        .executeTakeFirstOrThrow();
      step("invite");
      return { invite: toInvite(row), token };
    });
  }

  async listInvites(workspaceId: string): Promise<Invite[]> {
    const rows = await this.db.selectFrom("invites").selectAll().where("workspace_id", "=", workspaceId).orderBy("created_at", "desc").orderBy("id").execute();
    return rows.map(toInvite);
  }

  /** Withdraws an invite that has not been used (a used one is history and stays). */
  revokeInvite(workspaceId: string, inviteId: string): Promise<void> {
    return this.#write("revoke-invite", async (trx, step) => {
      const row = await trx.selectFrom("invites").select(["id", "used_at"]).where("id", "=", inviteId).where("workspace_id", "=", workspaceId).executeTakeFirst();
      if (!row) throw new GatewayError("not_found", `no invite ${inviteId}`);
      if (row.used_at !== null) throw new GatewayError("invite_used");
      await trx.deleteFrom("invites").where("id", "=", inviteId).execute();
      step("invite");
    });
  }

  /** What an invite token points at, without using it (for the accept page). */
  async peekInvite(token: string): Promise<(Invite & { workspaceName: string }) | null> {
    const row = await this.db
      .selectFrom("invites")
      .innerJoin("workspaces", "workspaces.id", "invites.workspace_id")
      .selectAll("invites")
      .select("workspaces.name as workspace_name")
      .where("invites.token_hash", "=", hashToken(token))
      .executeTakeFirst();
    return row ? { ...toInvite(row), workspaceName: row.workspace_name } : null;
  }

  /**
   * Uses an invite. Checks, in order: unknown (not_found), used (invite_used), expired
   * (invite_expired), already a member (already_member). The invite is marked used and the
   * membership inserted in the same transaction; the conditional UPDATE makes it single-use.
   */
  acceptInvite(token: string, accountId: string, now = Date.now()): Promise<{ workspace: Workspace; role: InviteRole }> {
    return this.#write("accept", async (trx, step) => {
      const row = await trx.selectFrom("invites").selectAll().where("token_hash", "=", hashToken(token)).executeTakeFirst();
      if (!row) throw new GatewayError("not_found", "No such invite.");
      if (row.used_at !== null) throw new GatewayError("invite_used");
      if (Number(row.expires_at) <= now) throw new GatewayError("invite_expired");
      const existing = await trx.selectFrom("memberships").select("role").where("workspace_id", "=", row.workspace_id).where("account_id", "=", accountId).executeTakeFirst();
      if (existing) throw new GatewayError("already_member");
      const used = await trx
        .updateTable("invites")
        .set({ used_at: BigInt(now), used_by: accountId })
        .where("id", "=", row.id)
        .where("used_at", "is", null)
        .executeTakeFirst();
      if (used.numUpdatedRows === 0n) throw new GatewayError("invite_used");
      step("invite");
      try {
        await trx
          .insertInto("memberships")
          .values({ workspace_id: row.workspace_id, account_id: accountId, role: row.role, created_at: BigInt(now) })
          .execute();
      } catch (error) {
        if (dbErrorKind(error) === "unique") throw new GatewayError("already_member");
        throw error;
      }
      step("membership");
      const ws = await trx.selectFrom("workspaces").selectAll().where("id", "=", row.workspace_id).executeTakeFirstOrThrow();
      return { workspace: { id: ws.id, name: ws.name, createdBy: ws.created_by, createdAt: Number(ws.created_at) }, role: row.role };
    });
  }

  async #membership(trx: Trx, workspaceId: string, accountId: string): Promise<Member> {
    const row = await trx
      .selectFrom("memberships")
      .innerJoin("accounts", "accounts.id", "memberships.account_id")
      .select(["memberships.account_id", "accounts.email", "memberships.role", "memberships.created_at"])
      .where("memberships.workspace_id", "=", workspaceId)
      .where("memberships.account_id", "=", accountId)
      .executeTakeFirst();
    if (!row) throw new GatewayError("not_found", `no member ${accountId} in this workspace`);
    return { accountId: row.account_id, email: row.email, role: row.role, joinedAt: Number(row.created_at) };
  }

  async #write<T>(operation: string, run: (trx: Trx, step: Checkpoint) => Promise<T>): Promise<T> {
    const step: Checkpoint = (name) => {
      const point = `${operation}:${name}`;
      if (this.failAfter === point) throw new Error(`injected failure after ${point}`);
    };
    try {
      return await transact(this.db, (trx) => run(trx, step));
    } catch (error) {
      if (error instanceof GatewayError) throw error;
      const failure = new GatewayError("workspace_write_failed");
      failure.cause = error;
      throw failure;
    }
  }
}
