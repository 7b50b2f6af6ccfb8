// A replayed settlement changes nothing, also in the corner case where the replay itself deleted a
// hold row (a hold with the settled request's id reappeared): the deletion is rolled back with the
// rest (on PostgreSQL gw_settle raises SQLSTATE GW409 to undo it; on SQLite the savepoint is rolled back).
import { describe, expect, it } from "vitest";
import type { StoreBilling } from "../../src/billing/billing-store.js";
import type { Store } from "../../src/store/index.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { admission, counters, makeAccount, makeKey, usage, useBillingStore } from "./support.js";

for (const kind of DATABASE_KINDS) {
  describe(`settlement replay on ${kind}`, () => {
    let store: Store;
    let billing: StoreBilling;
    useBillingStore(kind, (f) => ({ store, billing } = f));

    it("a replay that found a hold row rolls its deletion back and answers the first charge", async () => {
      const accountId = await makeAccount(store, { balance: 1_000_000_000n });
      const keyId = await makeKey(store, accountId);
      const hold = await billing.admit(admission(accountId, keyId));
      const row = await store.db.selectFrom("holds").selectAll().where("id", "=", hold.id).executeTakeFirstOrThrow();
      expect(await billing.settle(hold, usage(100, 100), "mock")).toEqual({ cost: 1_250_000n, recorded: true });
      // The hold reappears with its reservation (a consistent state), as if admitted again.
      await store.db.insertInto("holds").values(row).execute();
      for (const table of ["accounts", "keys"] as const) {
        await store.db
          .updateTable(table)
          .set((eb) => ({ held_nano: eb("held_nano", "+", row.amount_nano), held_tokens: eb("held_tokens", "+", row.tokens) }))
          .where("id", "=", table === "accounts" ? accountId : keyId)
          .execute();
      }
      const before = await counters(store, accountId, keyId);
      expect(before.holds).toEqual([{ request_id: hold.requestId }]);
      expect(await billing.settle(hold, usage(999, 999), "mock")).toEqual({ cost: 1_250_000n, recorded: false });
      expect(await counters(store, accountId, keyId)).toEqual(before);
    });

    it("admission refusals report the same messages", async () => {
      const accountId = await makeAccount(store, { balance: 5_000_000n });
      const keyId = await makeKey(store, accountId);
      await expect(billing.admit(admission(accountId, keyId))).rejects.toMatchObject({
        type: "quota_exceeded",
        message: "The balance available (0.005 USD) does not cover this request's projected cost of 0.0075 USD.",
      });
      await expect(billing.admit(admission("acct_missing", keyId))).rejects.toMatchObject({ type: "auth_error", message: "The key's account does not exist." });
      await store.accounts.setStatus(accountId, "suspended");
      await expect(billing.admit(admission(accountId, keyId))).rejects.toMatchObject({
        type: "account_suspended",
        message: expect.stringMatching(/^The account is suspended: .*reactivates it/),
      });
    });
  });
}
