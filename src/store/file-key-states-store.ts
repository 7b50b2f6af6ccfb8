// The state of the config file's provider keys (catalog.source: file; migration 0027): the file
// lists the keys, the database remembers which of them an operator or the gateway disabled. A row
// is keyed by provider and the key's fingerprint under the server secret, never the key; a key with
// no row is active. Every change bumps the catalog head in its transaction, so every process
// follows it within the catalog watch's poll (catalog-watch.ts).
import type { Kysely, Transaction } from "kysely";
import { nowMs } from "../core/ids.js";
import type { SecretBox } from "../core/secret-box.js";
import { bumpCatalogHead } from "./catalog-store.js";
import type { Database } from "./tables.js";

export interface FileKeyState {
  provider: string;
  fingerprint: string;
  last4: string;
  status: "active" | "disabled";
  /** Why it was last changed ("the upstream answered HTTP 401", "an operator"). */
  reason: string | null;
  changedAt: number;
}

export class FileKeyStatesStore {
  constructor(
    private readonly db: Kysely<Database> | Transaction<Database>,
    private readonly box: SecretBox,
    private readonly dialect: "sqlite" | "postgres",
  ) {}

  /** The key's fingerprint under the server secret: what identifies it here and in its id. */
  fingerprint(key: string): string {
    return this.box.fingerprint(key.trim());
  }

  async all(): Promise<FileKeyState[]> {
    const rows = await this.db.selectFrom("file_key_states").selectAll().orderBy("provider").orderBy("fingerprint").execute();
    return rows.map((r) => ({
      provider: r.provider,
      fingerprint: r.fingerprint,
      last4: r.last4,
      status: r.status === "disabled" ? "disabled" : "active",
      reason: r.reason,
      changedAt: Number(r.changed_at),
    }));
  }

  /**
   * Sets the key's status; the status it had before ("active" without a row). Unchanged: nothing
   * written. Call it inside the change's transaction (Store.audited) with its audit row.
   */
  async setStatus(input: { provider: string; fingerprint: string; last4: string; status: FileKeyState["status"]; reason: string | null }): Promise<FileKeyState["status"]> {
    const row = await this.db.selectFrom("file_key_states").select("status").where("provider", "=", input.provider).where("fingerprint", "=", input.fingerprint).executeTakeFirst();
    const before = row?.status === "disabled" ? "disabled" : "active";
    if (before === input.status) return before;
    const values = { last4: input.last4, status: input.status, reason: input.reason, changed_at: BigInt(nowMs()) };
    await this.db
      .insertInto("file_key_states")
      .values({ provider: input.provider, fingerprint: input.fingerprint, ...values })
      .onConflict((oc) => oc.columns(["provider", "fingerprint"]).doUpdateSet(values))
      .execute();
    await bumpCatalogHead(this.db, this.dialect);
    return before;
  }
}
