// Migration 0007 adds the ledger's nullable deployment column on a database that already has rows;
// settlement then records the serving deployment of a routing group, and null for any other model.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { migrate } from "../../src/store/migrate.js";
import type { Store } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { admission, chatModel, makeAccount, makeKey, openTestStore, usage } from "../billing/support.js";

for (const kind of DATABASE_KINDS) {
  describe(`migration 0007 (ledger deployment) on ${kind}`, () => {
    let database: TestDatabase;
    let store: Store;
    let billing: StoreBilling;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      store = await openTestStore(database, false);
      await migrate(store.handle, "0006-upstream-health");
      billing = new StoreBilling(store.handle);
    });
    afterAll(async () => {
      await billing?.stopSweeper();
      await store?.close();
      await database?.drop();
    });

    it("keeps earlier rows (deployment null) and records the serving deployment from then on", async () => {
      const accountId = await makeAccount(store, { balance: 1_000_000_000n });
      const keyId = await makeKey(store, accountId);
      expect((await migrate(store.handle)).applied).toEqual(["0007-ledger-deployment", "0008-pricing-dimensions"]);

      const routed = await billing.admit(admission(accountId, keyId, 1000, 500, { model: chatModel({ deployment: "east" }) }));
      await billing.settle(routed, usage(100, 50), "mock");
      const plain = await billing.admit(admission(accountId, keyId));
      await billing.settle(plain, usage(100, 50), "mock");

      const rows = await store.db.selectFrom("ledger").select(["kind", "request_id", "deployment"]).where("account_id", "=", accountId).orderBy("id").execute();
      expect(rows.map((r) => [r.kind, r.deployment])).toEqual([
        ["credit", null],
        ["usage", "east"],
        ["usage", null],
      ]);
      expect(rows[1]!.request_id).toBe(routed.requestId);
    });
  });
}
