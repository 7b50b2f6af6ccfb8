// The show-again window: a freshly minted raw key kept encrypted (AES-GCM, SecretBox) for 5 minutes,
// reachable only with a random token that is bound to one account and one key. Only the token's
// hash is stored, so the database alone cannot reveal a key.
import { createHash, randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { SecretBox } from "../core/secret-box.js";
import { GatewayError } from "../errors/catalogue.js";
import type { Database } from "./tables.js";

export const SHOW_AGAIN_TTL_MS = 5 * 60_000;

function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export class ShowAgainStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
  ) {}

  /** Keeps the raw key for the window; returns the token and when it expires (epoch ms). */
  async put(input: { accountId: string; keyId: string; raw: string; now?: number }): Promise<{ token: string; expiresAt: number }> {
    const now = input.now ?? Date.now();
    const token = randomBytes(32).toString("base64url");
    const expiresAt = now + SHOW_AGAIN_TTL_MS;
    await this.db
      .insertInto("show_again_tokens")
      .values({
        token_hash: hashToken(token),
        account_id: input.accountId,
        key_id: input.keyId,
        ciphertext: this.box.encrypt(input.raw),
        created_at: BigInt(now),
        expires_at: BigInt(expiresAt),
      })
      .execute();
    // Expired ciphertexts have no use; key creation is a convenient moment to drop them.
    await this.db.deleteFrom("show_again_tokens").where("expires_at", "<=", BigInt(now)).execute();
    return { token, expiresAt };
  }

  /** The raw key, or key_show_expired when the token is unknown, expired or bound elsewhere. */
  async reveal(input: { token: string; accountId: string; keyId: string; now?: number }): Promise<{ raw: string; expiresAt: number }> {
    const now = input.now ?? Date.now();
    const row = await this.db.selectFrom("show_again_tokens").selectAll().where("token_hash", "=", hashToken(input.token)).executeTakeFirst();
    // One answer for every failure: a caller learns nothing about other accounts' keys.
    if (!row || row.account_id !== input.accountId || row.key_id !== input.keyId || Number(row.expires_at) <= now) {
      throw new GatewayError("key_show_expired");
    }
    return { raw: this.box.decrypt(row.ciphertext), expiresAt: Number(row.expires_at) };
  }

  /** Ends the window early, e.g. when the key is revoked. */
  async forgetKey(keyId: string): Promise<void> {
    await this.db.deleteFrom("show_again_tokens").where("key_id", "=", keyId).execute();
  }
}
