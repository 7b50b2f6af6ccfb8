// An account's own upstream provider keys, encrypted at rest. Only the last four characters are
// ever shown; the plaintext leaves this module only towards the upstream call.
import type { Kysely } from "kysely";
import { GatewayError } from "../errors/catalogue.js";
import { newId, nowMs } from "../core/ids.js";
import type { SecretBox } from "../core/secret-box.js";
import { dbErrorKind } from "./db-errors.js";
import type { Database } from "./tables.js";

export interface UpstreamKeyInfo {
  id: string;
  accountId: string;
  provider: string;
  label: string;
  last4: string;
  createdAt: number;
}

export class UpstreamKeysStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
  ) {}

  async add(input: { accountId: string; provider: string; key: string; label?: string }): Promise<UpstreamKeyInfo> {
    const secret = input.key.trim();
    if (secret.length < 8) throw new GatewayError("invalid_request", "the upstream key is too short", { param: "key" });
    const row = {
      id: newId("upk"),
      account_id: input.accountId,
      provider: input.provider,
      label: input.label ?? "",
      ciphertext: this.box.encrypt(secret),
      fingerprint: this.box.fingerprint(secret),
      last4: secret.slice(-4),
      created_at: nowMs(),
    };
    try {
      await this.db.insertInto("upstream_keys").values(row).execute();
    } catch (error) {
      const kind = dbErrorKind(error);
      if (kind === "unique") throw new GatewayError("conflict", "this key is already stored for that provider");
      if (kind === "foreign_key") throw new GatewayError("account_not_found", `no account ${input.accountId}`);
      throw error;
    }
    return { id: row.id, accountId: row.account_id, provider: row.provider, label: row.label, last4: row.last4, createdAt: Number(row.created_at) };
  }

  async list(accountId: string): Promise<UpstreamKeyInfo[]> {
    const rows = await this.db
      .selectFrom("upstream_keys")
      .select(["id", "account_id", "provider", "label", "last4", "created_at"])
      .where("account_id", "=", accountId)
      .orderBy("provider")
      .orderBy("created_at")
      .execute();
    return rows.map((r) => ({ id: r.id, accountId: r.account_id, provider: r.provider, label: r.label, last4: r.last4, createdAt: Number(r.created_at) }));
  }

  async remove(id: string): Promise<void> {
    const result = await this.db.deleteFrom("upstream_keys").where("id", "=", id).executeTakeFirst();
    if (result.numDeletedRows === 0n) throw new GatewayError("not_found", `no upstream key ${id}`);
  }

  /** Every account's keys with the owner's email, each with a fingerprint of its secret; the secret itself stays here. */
  async listAllFingerprinted(fingerprint: (provider: string, secret: string) => string): Promise<Array<UpstreamKeyInfo & { fingerprint: string; accountEmail: string }>> {
    const rows = await this.db
      .selectFrom("upstream_keys")
      .innerJoin("accounts", "accounts.id", "upstream_keys.account_id")
      .selectAll("upstream_keys")
      .select("accounts.email")
      .orderBy("upstream_keys.provider")
      .orderBy("upstream_keys.account_id")
      .orderBy("upstream_keys.created_at")
      .execute();
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      accountEmail: r.email,
      provider: r.provider,
      label: r.label,
      last4: r.last4,
      createdAt: Number(r.created_at),
      fingerprint: fingerprint(r.provider, this.box.decrypt(r.ciphertext)),
    }));
  }

  /** Decrypted keys of one account, grouped by provider: what the failover loop tries. */
  async secretsByProvider(accountId: string): Promise<Map<string, string[]>> {
    const rows = await this.db.selectFrom("upstream_keys").select(["provider", "ciphertext"]).where("account_id", "=", accountId).orderBy("created_at").execute();
    const byProvider = new Map<string, string[]>();
    for (const row of rows) {
      const list = byProvider.get(row.provider) ?? [];
      list.push(this.box.decrypt(row.ciphertext));
      byProvider.set(row.provider, list);
    }
    return byProvider;
  }
}
