// Redemption codes on both databases (docs/billing.md, "Redemption codes"): minted codes are stored
// hashed and redeem once; 20 parallel redemptions of one code credit exactly once with one ledger row;
// an injected failure inside the redemption transaction leaves nothing half-applied; used, revoked,
// expired and unknown codes are refused with their reason and change nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashRedemptionCode, normaliseRedemptionCode } from "../../src/store/redemption-code.js";
import { MAX_BALANCE, parseUsd } from "../../src/core/money.js";
import { GatewayError } from "../../src/errors/catalogue.js";
import { openStore, type Store } from "../../src/store/index.js";
import { verifyLedger } from "../../src/store/ledger-verify.js";
import { redemptionNote } from "../../src/store/redemption-codes-store.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";

const DAY = 86_400_000;

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

for (const kind of DATABASE_KINDS) {
  describe(`redemption codes on ${kind}`, () => {
    let database: TestDatabase;
    let store: Store;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: "test-secret-0123456789" });
    });
    afterAll(async () => {
      await store?.close();
      await database?.drop();
    });

    const newAccount = async (balance = "1") =>
      store.accounts.create({ email: `codes-${Math.random().toString(36).slice(2)}@example.com`, tier: "standard", balance: parseUsd(balance)! });
    const mintOne = async (value = "10", expiresAt = Date.now() + DAY) => (await store.codes.mint({ value: parseUsd(value)!, count: 1, expiresAt }))[0]!;
    const creditRows = (accountId: string) =>
      store.db.selectFrom("ledger").select(["kind", "cost_nano", "note"]).where("account_id", "=", accountId).where("kind", "=", "credit").orderBy("id").execute();

    it("stores only the hash; typed variants of the code redeem it", async () => {
      const { code, raw } = await mintOne("12.50");
      expect(raw).toMatch(/^MGW(-[0-9A-HJKMNP-TV-Z]{5}){5}$/);
      const row = await store.db.selectFrom("redemption_codes").selectAll().where("id", "=", code.id).executeTakeFirstOrThrow();
      expect(row.hash).toBe(hashRedemptionCode(raw));
      // The list shows the first group only; the rest of the text is nowhere in the row.
      expect(Object.values(row).map(String).join(" ")).not.toContain(raw.slice(10));
      // Lower case, spaces for dashes, no prefix, O for 0 and l for 1: all the same code.
      const typed = ` ${raw.slice(4).toLowerCase().replace(/-/g, " ").replace(/0/g, "o").replace(/1/g, "l")} `;
      expect(normaliseRedemptionCode(typed)).toBe(normaliseRedemptionCode(raw));
      const account = await newAccount("1");
      const result = await store.codes.redeem(typed, account.id);
      expect(result.account.balance).toBe(parseUsd("13.50"));
      expect(await creditRows(account.id)).toEqual([
        { kind: "credit", cost_nano: parseUsd("1"), note: "opening balance" },
        { kind: "credit", cost_nano: parseUsd("12.50"), note: redemptionNote(code) },
      ]);
      const used = (await store.codes.get(code.id))!;
      expect(used.usedBy).toBe(account.id);
      expect(used.usedAt).not.toBeNull();
      expect((await verifyLedger(store.db, { accountId: account.id })).broken).toBeNull();
    });

    it("20 parallel redemptions of one code: exactly one succeeds, one ledger row", async () => {
      const { code, raw } = await mintOne("7");
      const accounts = await Promise.all(Array.from({ length: 4 }, () => newAccount("0")));
      const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.codes.redeem(raw, accounts[i % 4]!.id)));
      const won = results.filter((r) => r.status === "fulfilled");
      expect(won).toHaveLength(1);
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(lost.map((r) => (r.reason as GatewayError).details.code)).toEqual(Array(19).fill("code_used"));
      const rows = await store.db.selectFrom("ledger").select(["account_id", "cost_nano"]).where("note", "=", redemptionNote(code)).execute();
      expect(rows).toEqual([{ account_id: (await store.codes.get(code.id))!.usedBy, cost_nano: parseUsd("7") }]);
      const balances = await Promise.all(accounts.map(async (a) => (await store.accounts.get(a.id))!.balance));
      expect(balances.reduce((sum, b) => sum + b, 0n)).toBe(parseUsd("7"));
    });

    it.each(["after_mark", "after_credit"] as const)("a failure %s leaves nothing half-applied", async (point) => {
      const { code, raw } = await mintOne("3");
      const account = await newAccount("1");
      store.codes.failAt = point;
      try {
        await expect(store.codes.redeem(raw, account.id)).rejects.toThrow(/injected failure/);
      } finally {
        store.codes.failAt = null;
      }
      expect((await store.codes.get(code.id))!.usedAt).toBeNull();
      expect((await store.accounts.get(account.id))!.balance).toBe(parseUsd("1"));
      expect(await creditRows(account.id)).toHaveLength(1);
      // The code is still good afterwards.
      expect((await store.codes.redeem(raw, account.id)).account.balance).toBe(parseUsd("4"));
    });

    it("refuses used, revoked, expired and unknown codes with their reason, changing nothing", async () => {
      const account = await newAccount("1");
      const used = await mintOne("1");
      await store.codes.redeem(used.raw, account.id);
      const revoked = await mintOne("1");
      expect((await store.codes.revoke(revoked.code.id)).revokedAt).not.toBeNull();
      const expired = await mintOne("1", Date.now() + 50);
      await new Promise((resolve) => setTimeout(resolve, 80));
      const cases: Array<[string, string]> = [
        [used.raw, "code_used"],
        [revoked.raw, "code_revoked"],
        [expired.raw, "code_expired"],
        ["MGW-00000-00000-00000-00000-00000", "code_unknown"],
        ["not a code", "code_unknown"],
      ];
      for (const [raw, reason] of cases) {
        const error = await refusal(store.codes.redeem(raw, account.id));
        expect(error.type, raw).toBe("code_not_redeemable");
        expect(error.details.code, raw).toBe(reason);
      }
      expect((await store.accounts.get(account.id))!.balance).toBe(parseUsd("2"));
      expect(await creditRows(account.id)).toHaveLength(2);
      // A used code cannot be revoked; revoking a revoked one changes nothing.
      expect((await refusal(store.codes.revoke(used.code.id))).type).toBe("invalid_state");
      expect((await store.codes.revoke(revoked.code.id)).revokedAt).toBe((await store.codes.get(revoked.code.id))!.revokedAt);
      expect((await refusal(store.codes.revoke("code_missing"))).type).toBe("not_found");
    });

    it("a credit past the maximum balance is refused and the code stays unused", async () => {
      const account = await store.accounts.create({ email: `full-${kind}@example.com`, tier: "standard", balance: MAX_BALANCE });
      const { code, raw } = await mintOne("1");
      expect((await refusal(store.codes.redeem(raw, account.id))).type).toBe("balance_invariant");
      expect((await store.codes.get(code.id))!.usedAt).toBeNull();
    });

    it("lists newest first by batch and state; mint bounds are enforced", async () => {
      const batch = `batch-${kind}`;
      const minted = await store.codes.mint({ value: parseUsd("2")!, count: 3, expiresAt: Date.now() + DAY, batch, note: "spring promo", createdBy: "ops" });
      expect(new Set(minted.map((m) => m.raw)).size).toBe(3);
      await store.codes.revoke(minted[0]!.code.id);
      const all = await store.codes.list({ batch });
      expect(all.map((c) => c.id).sort()).toEqual(minted.map((m) => m.code.id).sort());
      expect((await store.codes.list({ batch, state: "revoked" })).map((c) => c.id)).toEqual([minted[0]!.code.id]);
      expect(await store.codes.list({ batch, state: "unused" })).toHaveLength(2);
      const first = await store.codes.list({ batch, limit: 1 });
      const rest = await store.codes.list({ batch, after: { createdAt: BigInt(first[0]!.createdAt), id: first[0]!.id } });
      expect([...first, ...rest].map((c) => c.id)).toEqual(all.map((c) => c.id));
      expect((await refusal(store.codes.mint({ value: 0n, count: 1, expiresAt: Date.now() + DAY }))).details.param).toBe("value_usd");
      expect((await refusal(store.codes.mint({ value: 1n, count: 501, expiresAt: Date.now() + DAY }))).details.param).toBe("count");
      expect((await refusal(store.codes.mint({ value: 1n, count: 1, expiresAt: Date.now() - 1 }))).details.param).toBe("expires_at");
    });
  });
}
