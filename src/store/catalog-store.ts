// The live catalog's storage (migration 0025): numbered, append-only versions of the catalog
// document (providers, models, tiers as the config file writes them, without keys), the shared
// provider keys encrypted beside them, and the head serial that every change of either bumps in its
// own transaction. Whether the document is valid is the config layer's business; this module only
// keeps versions in order: a change names the version it was made from, and one made from an older
// version than the latest is refused (two operators editing at once never lose an edit silently).
import { sql, type Kysely, type Transaction } from "kysely";
import { GatewayError } from "../errors/catalogue.js";
import { newId, nowMs } from "../core/ids.js";
import type { SecretBox } from "../core/secret-box.js";
import { dbErrorKind } from "./db-errors.js";
import type { Database } from "./tables.js";

export interface CatalogVersion {
  version: number;
  /** The document as JSON text, exactly as stored. */
  document: string;
  createdAt: number;
  /** Who made it, as the audit log names them ("admin_token:ops", "cli", "seed"). */
  actor: string | null;
  /** What made it: "seed", "edit", "rollback to 3". */
  reason: string;
}

export interface ProviderKeyInfo {
  id: string;
  provider: string;
  label: string;
  last4: string;
  status: "active" | "disabled";
  createdAt: number;
}

/** The NOTIFY channel of a catalog change on PostgreSQL (its payload: the new head serial). */
export const CATALOG_CHANNEL = "gateway_catalog";

export class CatalogStore {
  constructor(
    private readonly db: Kysely<Database> | Transaction<Database>,
    private readonly box: SecretBox,
    private readonly dialect: "sqlite" | "postgres",
  ) {}

  /** The head serial: changes with every catalog version and every provider key change. */
  async head(): Promise<bigint> {
    const row = await this.db.selectFrom("catalog_head").select("serial").where("id", "=", 1).executeTakeFirstOrThrow();
    return BigInt(row.serial);
  }

  async latest(): Promise<CatalogVersion | null> {
    const row = await this.db.selectFrom("catalog_versions").selectAll().orderBy("version", "desc").limit(1).executeTakeFirst();
    return row ? versionOf(row) : null;
  }

  async get(version: number): Promise<CatalogVersion | null> {
    const row = await this.db.selectFrom("catalog_versions").selectAll().where("version", "=", version).executeTakeFirst();
    return row ? versionOf(row) : null;
  }

  /** Newest first, without their documents. */
  async list(limit: number, beforeVersion?: number): Promise<Array<Omit<CatalogVersion, "document">>> {
    let query = this.db.selectFrom("catalog_versions").select(["version", "created_at", "actor", "reason"]).orderBy("version", "desc").limit(limit);
    if (beforeVersion !== undefined) query = query.where("version", "<", beforeVersion);
    const rows = await query.execute();
    return rows.map((r) => ({ version: Number(r.version), createdAt: Number(r.created_at), actor: r.actor, reason: r.reason }));
  }

  /**
   * Appends the next version, made from `baseVersion` (null: the catalog is empty). Call it inside
   * the change's transaction (Store.audited), so the version, the head and the audit row are one.
   */
  async append(input: { document: string; baseVersion: number | null; actor: string | null; reason: string }): Promise<CatalogVersion> {
    const latest = await this.db.selectFrom("catalog_versions").select("version").orderBy("version", "desc").limit(1).executeTakeFirst();
    const current = latest ? Number(latest.version) : null;
    if (current !== input.baseVersion) {
      throw new GatewayError(
        "conflict",
        current === null
          ? "The catalog has no version yet."
          : `The catalog changed meanwhile: the latest version is ${current}, this change was made from ${input.baseVersion ?? "none"}. Reload it and make the change again.`,
        { param: "base_version" },
      );
    }
    const row = { version: (current ?? 0) + 1, document: input.document, created_at: nowMs(), actor: input.actor, reason: input.reason };
    try {
      await this.db.insertInto("catalog_versions").values(row).execute();
    } catch (error) {
      // Another process appended the same version number first (PostgreSQL reads no lock here).
      if (dbErrorKind(error) === "unique") throw new GatewayError("conflict", "The catalog changed meanwhile. Reload it and make the change again.", { param: "base_version" });
      throw error;
    }
    await this.bump();
    return versionOf(row);
  }

  async providerKeys(provider?: string): Promise<ProviderKeyInfo[]> {
    let query = this.db.selectFrom("provider_keys").select(["id", "provider", "label", "last4", "status", "created_at"]).orderBy("provider").orderBy("created_at").orderBy("id");
    if (provider !== undefined) query = query.where("provider", "=", provider);
    return (await query.execute()).map(keyInfoOf);
  }

  /** The active keys' secrets by provider: for the upstream calls only. */
  async activeSecrets(): Promise<Map<string, string[]>> {
    const rows = await this.db.selectFrom("provider_keys").select(["provider", "ciphertext"]).where("status", "=", "active").orderBy("created_at").orderBy("id").execute();
    const byProvider = new Map<string, string[]>();
    for (const row of rows) {
      const list = byProvider.get(row.provider) ?? [];
      list.push(this.box.decrypt(row.ciphertext));
      byProvider.set(row.provider, list);
    }
    return byProvider;
  }

  /** One stored key with its secret: for the key's test request only. Null when there is none. */
  async withSecret(id: string): Promise<{ info: ProviderKeyInfo; secret: string } | null> {
    const row = await this.db
      .selectFrom("provider_keys")
      .select(["id", "provider", "label", "last4", "status", "created_at", "ciphertext"])
      .where("id", "=", id)
      .executeTakeFirst();
    return row ? { info: keyInfoOf(row), secret: this.box.decrypt(row.ciphertext) } : null;
  }

  async addProviderKey(input: { provider: string; key: string; label: string }): Promise<ProviderKeyInfo> {
    const secret = input.key.trim();
    if (secret.length < 8) throw new GatewayError("invalid_request", "key: the provider key is too short.", { param: "key" });
    const fingerprint = this.box.fingerprint(secret);
    const same = await this.db.selectFrom("provider_keys").select("id").where("provider", "=", input.provider).where("fingerprint", "=", fingerprint).executeTakeFirst();
    if (same) throw new GatewayError("conflict", `This key is already stored for ${input.provider} (${same.id}).`, { param: "key" });
    const row = {
      id: newId("pk"),
      provider: input.provider,
      label: input.label,
      ciphertext: this.box.encrypt(secret),
      fingerprint,
      last4: secret.slice(-4),
      status: "active" as const,
      created_at: nowMs(),
    };
    await this.db.insertInto("provider_keys").values(row).execute();
    await this.bump();
    return keyInfoOf(row);
  }

  async removeProviderKey(id: string): Promise<ProviderKeyInfo> {
    const row = await this.db.selectFrom("provider_keys").select(["id", "provider", "label", "last4", "status", "created_at"]).where("id", "=", id).executeTakeFirst();
    if (!row) throw new GatewayError("not_found", `No provider key ${id}.`);
    await this.db.deleteFrom("provider_keys").where("id", "=", id).execute();
    await this.bump();
    return keyInfoOf(row);
  }

  /** Sets a key's status (an operator re-enabling or disabling it); the key as it was. */
  async setProviderKeyStatus(id: string, status: ProviderKeyInfo["status"]): Promise<ProviderKeyInfo> {
    const row = await this.db.selectFrom("provider_keys").select(["id", "provider", "label", "last4", "status", "created_at"]).where("id", "=", id).executeTakeFirst();
    if (!row) throw new GatewayError("not_found", `No provider key ${id}.`);
    if (row.status !== status) {
      await this.db.updateTable("provider_keys").set({ status }).where("id", "=", id).execute();
      await this.bump();
    }
    return keyInfoOf(row);
  }

  /** Disables the active key of `provider` with this secret (the upstream refused it); null when none is active. */
  async disableBySecret(provider: string, secret: string): Promise<ProviderKeyInfo | null> {
    const row = await this.db
      .selectFrom("provider_keys")
      .select(["id", "provider", "label", "last4", "status", "created_at"])
      .where("provider", "=", provider)
      .where("fingerprint", "=", this.box.fingerprint(secret.trim()))
      .where("status", "=", "active")
      .executeTakeFirst();
    if (!row) return null;
    await this.db.updateTable("provider_keys").set({ status: "disabled" }).where("id", "=", row.id).execute();
    await this.bump();
    return keyInfoOf(row);
  }

  /** The live catalog MCP servers' header and environment values, decrypted, by mcpSecretKey(): for the MCP gateway only. */
  async mcpSecrets(): Promise<Map<string, string>> {
    const rows = await this.db.selectFrom("mcp_server_secrets").select(["server", "kind", "name", "ciphertext"]).execute();
    return new Map(rows.map((row) => [mcpSecretKey(row.server, row.kind, row.name), this.box.decrypt(row.ciphertext)]));
  }

  /**
   * Makes `server`'s stored values exactly `wanted`: a value replaces the stored one, null keeps it,
   * and every stored name not wanted is deleted. Call it inside the catalog version's transaction
   * (LiveCatalog.edit), which bumps the head.
   */
  async setMcpSecrets(server: string, wanted: ReadonlyArray<{ kind: "header" | "env"; name: string; value: string | null }>): Promise<void> {
    const stored = await this.db.selectFrom("mcp_server_secrets").select(["kind", "name"]).where("server", "=", server).execute();
    const keep = new Set(wanted.map((w) => mcpSecretKey(server, w.kind, w.name)));
    for (const row of stored)
      if (!keep.has(mcpSecretKey(server, row.kind, row.name)))
        await this.db.deleteFrom("mcp_server_secrets").where("server", "=", server).where("kind", "=", row.kind).where("name", "=", row.name).execute();
    for (const { kind, name, value } of wanted) {
      if (value === null) continue;
      await this.db.deleteFrom("mcp_server_secrets").where("server", "=", server).where("kind", "=", kind).where("name", "=", name).execute();
      await this.db
        .insertInto("mcp_server_secrets")
        .values({ server, kind, name, ciphertext: this.box.encrypt(value), last4: value.slice(-4), updated_at: nowMs() })
        .execute();
    }
  }

  private bump(): Promise<void> {
    return bumpCatalogHead(this.db, this.dialect);
  }
}

/**
 * Bumps the head serial every process watches (also for a change of a config file key's state,
 * file-key-states-store.ts). Call it inside the change's transaction.
 */
export async function bumpCatalogHead(db: Kysely<Database> | Transaction<Database>, dialect: "sqlite" | "postgres"): Promise<void> {
  await db
    .updateTable("catalog_head")
    .set((eb) => ({ serial: eb("serial", "+", 1) }))
    .where("id", "=", 1)
    .execute();
  // Delivered at commit, and only if the transaction commits: a refused change wakes nobody.
  if (dialect === "postgres") await sql`SELECT pg_notify(${CATALOG_CHANNEL}, '')`.execute(db);
}

/** A stored MCP server value's key in mcpSecrets(). */
export function mcpSecretKey(server: string, kind: string, name: string): string {
  return `${server}\u0000${kind}\u0000${name}`;
}

function versionOf(row: { version: number | bigint; document: string; created_at: number | bigint; actor: string | null; reason: string }): CatalogVersion {
  return { version: Number(row.version), document: row.document, createdAt: Number(row.created_at), actor: row.actor, reason: row.reason };
}

function keyInfoOf(row: { id: string; provider: string; label: string; last4: string; status: string; created_at: number | bigint }): ProviderKeyInfo {
  return { id: row.id, provider: row.provider, label: row.label, last4: row.last4, status: row.status === "disabled" ? "disabled" : "active", createdAt: Number(row.created_at) };
}
