// Redemption codes (migration 0016; docs/billing.md, "Redemption codes"): minted by administrators,
// redeemed once by a signed-in account. Redemption is one transaction: a conditional UPDATE marks the
// code used only while it is unused, unrevoked and unexpired, and the credit goes through the same
// ledger append as an administrator credit (AccountsStore.adjustBalance). Of concurrent redemptions
// of one code exactly one finds the row to update; if anything after that fails, nothing remains.
import type { Kysely, Selectable } from "kysely";
import { hashRedemptionCode, mintRedemptionCode } from "./redemption-code.js";
import { newId, nowMs } from "../core/ids.js";
import { MAX_BALANCE, type Nano } from "../core/money.js";
import { GatewayError } from "../errors/catalogue.js";
import { AccountsStore, type Account } from "./accounts-store.js";
import type { Database, RedemptionCodesTable } from "./tables.js";
import { transact } from "./transact.js";

export type RedemptionCodeState = "unused" | "used" | "revoked" | "expired";
export const REDEMPTION_CODE_STATES: readonly RedemptionCodeState[] = ["unused", "used", "revoked", "expired"];
/** The most codes one mint makes (they are shown once, so they must fit on a page and in a response). */
export const MAX_CODES_PER_MINT = 500;

export interface RedemptionCode {
  id: string;
  prefix: string;
  value: Nano;
  batch: string | null;
  note: string | null;
  createdBy: string | null;
  createdAt: number;
  expiresAt: number;
  usedAt: number | null;
  usedBy: string | null;
  revokedAt: number | null;
}

export interface NewRedemptionCodes {
  value: Nano;
  count: number;
  expiresAt: number;
  batch?: string | null;
  note?: string | null;
  createdBy?: string | null;
}

/** Test hook: fail the redemption transaction after this step (nothing may remain of it). */
export type RedemptionFaultPoint = "after_mark" | "after_credit";

function toCode(row: Selectable<RedemptionCodesTable>): RedemptionCode {
  return {
    id: row.id,
    prefix: row.prefix,
    value: BigInt(row.value_nano),
    batch: row.batch,
    note: row.note,
    createdBy: row.created_by,
    createdAt: Number(row.created_at),
    expiresAt: Number(row.expires_at),
    usedAt: row.used_at === null ? null : Number(row.used_at),
    usedBy: row.used_by,
    revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

export function redemptionCodeState(code: RedemptionCode, now = Date.now()): RedemptionCodeState {
  if (code.usedAt !== null) return "used";
  if (code.revokedAt !== null) return "revoked";
  return code.expiresAt <= now ? "expired" : "unused";
}

/** The ledger note of a redemption's credit row: names the code, never its text. */
export function redemptionNote(code: RedemptionCode): string {
  return `redemption code ${code.id} (${code.prefix})`;
}

export class RedemptionCodesStore {
  /** Test hook (RedemptionFaultPoint); null in production. */
  failAt: RedemptionFaultPoint | null = null;

  constructor(private readonly db: Kysely<Database>) {}

  /** Mints `count` codes; the raw texts are returned once and never stored. */
  async mint(input: NewRedemptionCodes): Promise<Array<{ code: RedemptionCode; raw: string }>> {
    if (input.value <= 0n || input.value > MAX_BALANCE) throw new GatewayError("invalid_request", "value: must be more than 0 and at most 1000000.00", { param: "value_usd" });
    if (!Number.isInteger(input.count) || input.count < 1 || input.count > MAX_CODES_PER_MINT) {
      throw new GatewayError("invalid_request", `count: must be 1 to ${MAX_CODES_PER_MINT}`, { param: "count" });
    }
    const now = nowMs();
    if (BigInt(input.expiresAt) <= now) throw new GatewayError("invalid_request", "expires_at: must be in the future", { param: "expires_at" });
    const minted = Array.from({ length: input.count }, () => ({ id: newId("code"), ...mintRedemptionCode() }));
    const rows = await transact(this.db, (trx) =>
      trx
        .insertInto("redemption_codes")
        .values(
          minted.map((m) => ({
            id: m.id,
            hash: m.hash,
            prefix: m.display,
            value_nano: input.value,
            batch: input.batch ?? null,
            note: input.note ?? null,
            created_by: input.createdBy ?? null,
            created_at: now,
            expires_at: BigInt(input.expiresAt),
            used_at: null,
            used_by: null,
            revoked_at: null,
          })),
        )
        .returningAll()
        .execute(),
    );
    const byId = new Map(rows.map((row) => [row.id, toCode(row)]));
    return minted.map((m) => ({ code: byId.get(m.id)!, raw: m.raw }));
  }

  async get(id: string): Promise<RedemptionCode | null> {
    const row = await this.db.selectFrom("redemption_codes").selectAll().where("id", "=", id).executeTakeFirst();
    return row ? toCode(row) : null;
  }

  /** Newest first; `after` continues from the last code of the previous page. */
  async list(options: { limit?: number; after?: { createdAt: bigint; id: string }; batch?: string; state?: RedemptionCodeState; now?: number } = {}): Promise<RedemptionCode[]> {
    const now = BigInt(options.now ?? Date.now());
    let query = this.db
      .selectFrom("redemption_codes")
      .selectAll()
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(options.limit ?? 100);
    if (options.after) {
      const { createdAt, id } = options.after;
      query = query.where((eb) => eb.or([eb("created_at", "<", createdAt), eb.and([eb("created_at", "=", createdAt), eb("id", "<", id)])]));
    }
    if (options.batch !== undefined) query = query.where("batch", "=", options.batch);
    switch (options.state) {
      case "used":
        query = query.where("used_at", "is not", null);
        break;
      case "revoked":
        query = query.where("used_at", "is", null).where("revoked_at", "is not", null);
        break;
      case "expired":
        query = query.where("used_at", "is", null).where("revoked_at", "is", null).where("expires_at", "<=", now);
        break;
      case "unused":
        query = query.where("used_at", "is", null).where("revoked_at", "is", null).where("expires_at", ">", now);
        break;
      case undefined:
        break;
    }
    return (await query.execute()).map(toCode);
  }

  /** Revokes an unused code (a used one: invalid_state); revoking a revoked code changes nothing. */
  async revoke(id: string): Promise<RedemptionCode> {
    return transact(this.db, async (trx) => {
      await trx.updateTable("redemption_codes").set({ revoked_at: nowMs() }).where("id", "=", id).where("used_at", "is", null).where("revoked_at", "is", null).execute();
      const row = await trx.selectFrom("redemption_codes").selectAll().where("id", "=", id).executeTakeFirst();
      if (!row) throw new GatewayError("not_found", `No redemption code ${id}.`);
      const code = toCode(row);
      if (code.revokedAt === null) throw new GatewayError("invalid_state", "The code has been redeemed already; a used code cannot be revoked.");
      return code;
    });
  }

  /**
   * Redeems a code for an account: marks it used and credits its value in one transaction. A code
   * that is unknown, used, revoked or expired: code_not_redeemable, nothing written.
   */
  async redeem(input: string, accountId: string): Promise<{ code: RedemptionCode; account: Account }> {
    const hash = hashRedemptionCode(input);
    if (hash === null) throw notRedeemable("code_unknown");
    return this.#markUsedAndCredit(hash, accountId);
  }

  #markUsedAndCredit(hash: string, accountId: string): Promise<{ code: RedemptionCode; account: Account }> {
    return transact(this.db, async (trx) => {
      const now = nowMs();
      const marked = await trx
        .updateTable("redemption_codes")
        .set({ used_at: now, used_by: accountId })
        .where("hash", "=", hash)
        .where("used_at", "is", null)
        .where("revoked_at", "is", null)
        .where("expires_at", ">", now)
        .returningAll()
        .executeTakeFirst();
      if (!marked) {
        const row = await trx.selectFrom("redemption_codes").selectAll().where("hash", "=", hash).executeTakeFirst();
        throw notRedeemable(row ? (`code_${redemptionCodeState(toCode(row), Number(now))}` as const) : "code_unknown");
      }
      if (this.failAt === "after_mark") throw new Error("injected failure after marking the code used");
      const code = toCode(marked);
      const account = await new AccountsStore(trx).adjustBalance(accountId, code.value, redemptionNote(code));
      if (this.failAt === "after_credit") throw new Error("injected failure after the ledger credit");
      return { code, account };
    });
  }
}

const REASONS = {
  code_unknown: "This is not a code this gateway issued; check it for typos.",
  code_used: "This code has been redeemed already.",
  code_revoked: "This code has been revoked.",
  code_expired: "This code has expired.",
  code_unused: "This code could not be redeemed; try again.",
} as const;

function notRedeemable(code: keyof typeof REASONS): GatewayError {
  return new GatewayError("code_not_redeemable", REASONS[code], { code, param: "code" });
}
