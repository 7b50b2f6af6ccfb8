// Migration 0008 adds the per-dimension ledger columns to a database that already has rows (they keep
// 0), and settlement writes them from then on. On PostgreSQL the billing functions are re-created from
// their one definition (gw-batch-function.ts) after every migration run, under an advisory lock, also
// when no migration is pending, and the unused single-operation functions of 0002 are gone.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { LEDGER_DIMENSION_COLUMNS } from "../../src/core/dimensions.js";
import { migrate } from "../../src/store/migrate.js";
import type { Store } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { admission, makeAccount, makeKey, openTestStore, usage } from "../billing/support.js";

for (const kind of DATABASE_KINDS) {
  describe(`migration 0008 (pricing dimensions) on ${kind}`, () => {
    let database: TestDatabase;
    let store: Store;
    let billing: StoreBilling;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      store = await openTestStore(database, false);
      await migrate(store.handle, "0007-ledger-deployment");
      billing = new StoreBilling(store.handle);
    });
    afterAll(async () => {
      await billing?.stopSweeper();
      await store?.close();
      await database?.drop();
    });

    it("keeps earlier rows (0 in every new column) and records every dimension from then on", async () => {
      const accountId = await makeAccount(store, { balance: 1_000_000_000n });
      const keyId = await makeKey(store, accountId);
      expect((await migrate(store.handle)).applied).toContain("0008-pricing-dimensions");

      const hold = await billing.admit(admission(accountId, keyId));
      // 1,000 input of which 200 cached and 100 written for 5 minutes, 500 output (test model: 2.50 / 1.25 / 2.50 / 10 per Mtok).
      await billing.settle(hold, usage(1000, 500, { cachedInputTokens: 200, cacheWrite5mTokens: 100 }), "mock");

      const rows = (await store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).orderBy("id").execute()) as unknown as Array<Record<string, unknown>>;
      expect(rows.map((r) => r.kind)).toEqual(["credit", "usage"]);
      for (const column of LEDGER_DIMENSION_COLUMNS) expect(rows[0]![column], column).toBe(0n);
      // 700 x 2.50 = 1,750,000; 200 x 1.25 = 250,000; 100 x 2.50 = 250,000; 500 x 10 = 5,000,000 (nano).
      expect(rows[1]).toMatchObject({
        cost_nano: 7_250_000n,
        input_cost_nano: 1_750_000n,
        cached_input_cost_nano: 250_000n,
        cache_write_5m_tokens: 100n,
        cache_write_5m_cost_nano: 250_000n,
        output_cost_nano: 5_000_000n,
        request_cost_nano: 0n,
        cache_saving_nano: 250_000n,
      });
    });

    // PostgreSQL only: SQLite has no stored functions to re-create.
    if (kind === "postgres") {
      it("re-creates the billing functions on every run, also with nothing pending, under a lock", async () => {
        const definition = async () => (await sql<{ def: string }>`select pg_get_functiondef('gw_batch(jsonb)'::regprocedure) as def`.execute(store.db)).rows[0]!.def;
        expect(await definition()).toContain("cache_saving_nano");
        const stale = await sql<{ name: string }>`select proname as name from pg_proc where proname in ('gw_admit', 'gw_settle', 'gw_release')`.execute(store.db);
        expect(stale.rows).toEqual([]);

        await sql`create or replace function gw_batch(p_ops jsonb) returns jsonb language sql as $$ select '[]'::jsonb $$`.execute(store.db);
        expect(await definition()).not.toContain("cache_saving_nano");
        // Three runs at once (the pool's connections): none fails on "tuple concurrently updated".
        const reports = await Promise.all([migrate(store.handle), migrate(store.handle), migrate(store.handle)]);
        expect(reports.map((r) => r.applied)).toEqual([[], [], []]);
        expect(await definition()).toContain("cache_saving_nano");
      });
    }
  });
}
