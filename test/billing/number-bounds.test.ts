// The billing store's own range check (issue 19, defect 5): an admission or settlement whose numbers
// could overflow the database's 64-bit integers is refused before it joins a batch, so it neither
// fails the shared PostgreSQL batch (which would rerun item by item) nor changes anything; the
// operations batched with it go through in one statement.
import type { CompiledQuery } from "kysely";
import { describe, expect, it } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import type { Store } from "../../src/store/index.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { admission, counters, makeAccount, makeKey, usage, useBillingStore } from "./support.js";

/** A StoreBilling whose PostgreSQL batches are counted (gw_batch statements sent). */
function countingBilling(store: Store): { billing: StoreBilling; batches: () => number } {
  let batches = 0;
  const db = store.handle.db;
  const counting = new Proxy(db, {
    get(target, property) {
      if (property === "executeQuery") {
        return (query: CompiledQuery) => {
          if (query.sql.includes("gw_batch")) batches += 1;
          return target.executeQuery(query);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { billing: new StoreBilling({ ...store.handle, db: counting }), batches: () => batches };
}

for (const kind of DATABASE_KINDS) {
  describe(`billing number bounds on ${kind}`, () => {
    let store: Store;
    useBillingStore(kind, (f) => (store = f.store));

    it("refuses an admission projecting 1e30 or 2^63 tokens before the database; one batched with it is admitted", async () => {
      const { billing, batches } = countingBilling(store);
      const accountId = await makeAccount(store, { balance: 1_000_000_000n });
      const keyId = await makeKey(store, accountId);
      const before = await counters(store, accountId, keyId);
      for (const output of [1e30, 2 ** 63]) {
        const sent = batches();
        const [bad, good] = await Promise.allSettled([billing.admit(admission(accountId, keyId, 10, output)), billing.admit(admission(accountId, keyId))]);
        expect(bad).toMatchObject({ status: "rejected", reason: { type: "invalid_request", status: 400, details: { code: "projection_out_of_range" } } });
        expect(good.status).toBe("fulfilled");
        if (kind === "postgres") expect(batches() - sent).toBe(1);
        if (good.status === "fulfilled") await billing.release(good.value);
      }
      expect(await counters(store, accountId, keyId)).toEqual(before);
    });

    it("refuses a settlement of 1e30 tokens before the database (502, nothing changed); one batched with it is recorded", async () => {
      const { billing, batches } = countingBilling(store);
      const accountId = await makeAccount(store, { balance: 1_000_000_000n });
      const keyId = await makeKey(store, accountId);
      const badHold = await billing.admit(admission(accountId, keyId));
      const goodHold = await billing.admit(admission(accountId, keyId));
      const before = await counters(store, accountId, keyId);
      const sent = batches();
      const [bad, good] = await Promise.allSettled([billing.settle(badHold, usage(10, 1e30), "mock"), billing.settle(goodHold, usage(100, 100), "mock")]);
      expect(bad).toMatchObject({ status: "rejected", reason: { type: "ledger_write_failed", status: 502 } });
      expect(good).toMatchObject({ status: "fulfilled", value: { recorded: true } });
      if (kind === "postgres") expect(batches() - sent).toBe(1);
      const after = await counters(store, accountId, keyId);
      expect(after.ledger).toBe(before.ledger + 1);
      expect(after.holds.map((h) => h.request_id)).toEqual([badHold.requestId]);
    });
  });
}
