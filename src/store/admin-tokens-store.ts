// Admin tokens for /admin/v1 (docs/operations.md, "Admin API"): "mgwadm_" + 32 random bytes; only
// the SHA-256 hash is stored, like API keys (src/core/api-keys.ts). Created, listed and revoked
// with the CLI; the raw token is shown once.
import { randomBytes } from "node:crypto";
import type { Kysely, Selectable } from "kysely";
import { hashApiKey } from "../core/api-keys.js";
import { newId, nowMs } from "../core/ids.js";
import { GatewayError } from "../errors/catalogue.js";
import type { AdminTokensTable, Database } from "./tables.js";

export const ADMIN_TOKEN_PREFIX = "mgwadm_";
const TOKEN_SHAPE = /^mgwadm_[A-Za-z0-9_-]{43}$/;

export interface AdminToken {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: number;
  revokedAt: number | null;
}

function toAdminToken(row: Selectable<AdminTokensTable>): AdminToken {
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    scopes: row.scopes.split(" ").filter(Boolean),
    createdAt: Number(row.created_at),
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

export class AdminTokensStore {
  constructor(private readonly db: Kysely<Database>) {}

  async create(input: { name: string; scopes: readonly string[] }): Promise<{ token: AdminToken; raw: string }> {
    const raw = ADMIN_TOKEN_PREFIX + randomBytes(32).toString("base64url");
    const row = await this.db
      .insertInto("admin_tokens")
      .values({
        id: newId("admtok"),
        name: input.name,
        prefix: `${raw.slice(0, 14)}…`,
        hash: hashApiKey(raw),
        scopes: [...new Set(input.scopes)].sort().join(" "),
        created_at: nowMs(),
        revoked_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { token: toAdminToken(row), raw };
  }

  async list(): Promise<AdminToken[]> {
    const rows = await this.db.selectFrom("admin_tokens").selectAll().orderBy("created_at").orderBy("id").execute();
    return rows.map(toAdminToken);
  }

  async get(id: string): Promise<AdminToken | null> {
    const row = await this.db.selectFrom("admin_tokens").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toAdminToken(row) : null;
  }

  /** A live (not revoked) token by its raw value; null for a malformed, unknown or revoked one. */
  async authenticate(raw: string): Promise<AdminToken | null> {
    if (!TOKEN_SHAPE.test(raw)) return null;
    const row = await this.db.selectFrom("admin_tokens").selectAll().where("hash", "=", hashApiKey(raw)).where("revoked_at", "is", null).executeTakeFirst();
    return row ? toAdminToken(row) : null;
  }

  /** Revoking a revoked token changes nothing. */
  async revoke(id: string): Promise<AdminToken> {
    await this.db.updateTable("admin_tokens").set({ revoked_at: nowMs() }).where("id", "=", id).where("revoked_at", "is", null).execute();
    const token = await this.get(id);
    if (!token) throw new GatewayError("not_found", `no admin token ${id}`);
    return token;
  }
}
