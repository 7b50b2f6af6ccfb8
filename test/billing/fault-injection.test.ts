// The 502 contract: a settlement transaction that fails midway — after the account and key rows were
// already updated — is rolled back whole. A trigger installed by the test makes the monthly_usage
// write (statement 5 of 6) raise, on SQLite and on PostgreSQL alike.
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { StoreBilling } from "../../src/billing/billing-store.js";
import type { Store } from "../../src/store/index.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { admission, counters, makeAccount, makeKey, usage, useBillingStore } from "./support.js";

const USD = 1_000_000_000n;

async function installFailingTrigger(store: Store, accountId: string): Promise<void> {
  const id = sql.lit(accountId);
  if (store.dialect === "sqlite") {
    for (const event of ["insert", "update"]) {
      await sql`create trigger ${sql.raw(`fail_monthly_${event}`)} before ${sql.raw(event)} on monthly_usage
        when new.account_id = ${id} begin select raise(abort, 'injected failure'); end`.execute(store.db);
    }
    return;
  }
  await sql`create function fail_monthly() returns trigger language plpgsql as $$
      begin raise exception 'injected failure'; end $$`.execute(store.db);
  await sql`create trigger fail_monthly before insert or update on monthly_usage
      for each row when (new.account_id = ${id}) execute function fail_monthly()`.execute(store.db);
}

async function dropFailingTrigger(store: Store): Promise<void> {
  if (store.dialect === "sqlite") {
    await sql`drop trigger fail_monthly_insert`.execute(store.db);
    await sql`drop trigger fail_monthly_update`.execute(store.db);
    return;
  }
  await sql`drop trigger fail_monthly on monthly_usage`.execute(store.db);
  await sql`drop function fail_monthly()`.execute(store.db);
}

for (const kind of DATABASE_KINDS) {
  describe(`settlement fault injection on ${kind}`, () => {
    let store: Store;
    let billing: StoreBilling;
    useBillingStore(kind, (f) => ({ store, billing } = f));

    it("a failure midway -> ledger_write_failed and no counter changed; the hold stays for a retry", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId, { budgetCap: 1_375_000n, tokenCap: 5000 });
      // One settled request first, so that the failing upsert takes its UPDATE path as well.
      await billing.settle(await billing.admit(admission(accountId, keyId, 10, 10)), usage(10, 10), "mock");
      const hold = await billing.admit(admission(accountId, keyId, 100, 100));
      const before = await counters(store, accountId, keyId);

      await installFailingTrigger(store, accountId);
      try {
        const failed = billing.settle(hold, usage(100, 100), "mock");
        await expect(failed).rejects.toMatchObject({ name: "GatewayError", type: "ledger_write_failed", status: 502 });
        await expect(failed).rejects.toHaveProperty("cause.message", expect.stringMatching(/injected failure/));
        // The cost would also have exhausted the key: not even the status moved.
        expect(await counters(store, accountId, keyId)).toEqual(before);
        expect(before.holds).toEqual([{ request_id: hold.requestId }]);
      } finally {
        await dropFailingTrigger(store);
      }

      expect(await billing.settle(hold, usage(100, 100), "mock")).toEqual({ cost: 1_250_000n, recorded: true });
      const after = await counters(store, accountId, keyId);
      expect(after.ledger).toBe(before.ledger + 1);
      expect(after.account).toMatchObject({ total_spent_nano: before.account.total_spent_nano + 1_250_000n, held_nano: 0n });
      expect(after.key).toMatchObject({ status: "exhausted", held_nano: 0n });
    });

    it("a failure on the first settlement of a month (the INSERT path) is rolled back too", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const hold = await billing.admit(admission(accountId, keyId));
      const before = await counters(store, accountId, keyId);
      await installFailingTrigger(store, accountId);
      try {
        await expect(billing.settle(hold, usage(1000, 500), "mock")).rejects.toMatchObject({ type: "ledger_write_failed" });
        expect(await counters(store, accountId, keyId)).toEqual(before);
      } finally {
        await dropFailingTrigger(store);
      }
    });
  });
}
