// Migration 0004 rebuilds holds and monthly_usage on SQLite (WITHOUT ROWID) and drops holds_expiry on
// both databases: rows written before it are all there after it, with the same constraints.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import { migrate } from "../../src/store/migrate.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";

interface HoldRow {
  id: string;
  account_id: string;
  key_id: string | null;
  request_id: string;
  amount_nano: bigint;
  tokens: bigint;
  created_at: bigint;
  expires_at: bigint;
}

for (const kind of DATABASE_KINDS) {
  describe(`migration 0004 (lean billing tables) on ${kind}`, () => {
    let database: TestDatabase;
    let store: Store;
    let accountId: string;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: "test-secret-0123456789", migrate: false });
      expect((await migrate(store.handle, "0003-billing-batch-state")).applied).toEqual(["0001-initial", "0002-billing-functions", "0003-billing-batch-state"]);
      accountId = (await store.accounts.create({ email: `lean-${kind}@example.com`, tier: "default" })).id;
    });
    afterAll(async () => {
      await store?.close();
      await database?.drop();
    });

    const holds = async () => (await sql<HoldRow>`select * from holds order by id`.execute(store.db)).rows;
    const months = async () => (await sql`select * from monthly_usage order by month`.execute(store.db)).rows;
    const indexNames = async () =>
      kind === "sqlite"
        ? (await sql<{ name: string }>`select name from sqlite_master where type = 'index' and tbl_name = 'holds'`.execute(store.db)).rows.map((r) => r.name)
        : (await sql<{ name: string }>`select indexname as name from pg_indexes where tablename = 'holds'`.execute(store.db)).rows.map((r) => r.name);

    it("keeps every hold and monthly figure, and their constraints", async () => {
      for (const [i, key] of [null, "key_1", "key_2"].entries()) {
        await sql`insert into holds (id, account_id, key_id, request_id, amount_nano, tokens, created_at, expires_at)
          values (${`hold_${i}`}, ${accountId}, ${key}, ${`req_${i}`}, ${BigInt(1000 + i)}, ${BigInt(10 + i)}, ${BigInt(i)}, ${BigInt(900_000 + i)})`.execute(store.db);
      }
      for (const month of ["2026-10", "2026-11"]) {
        await sql`insert into monthly_usage (account_id, month, cost_nano, tokens, requests) values (${accountId}, ${month}, 5000, 70, 3)`.execute(store.db);
      }
      const holdsBefore = await holds();
      const monthsBefore = await months();
      expect(await indexNames()).toContain("holds_expiry");

      expect((await migrate(store.handle, "0004-lean-billing-tables")).applied).toEqual(["0004-lean-billing-tables"]);

      expect(await holds()).toEqual(holdsBefore);
      expect(await months()).toEqual(monthsBefore);
      expect(await indexNames()).not.toContain("holds_expiry");
      // One hold per request, non-negative amounts, the account must exist, one row per account and month.
      const insertHold = (id: string, account: string, requestId: string, amount: bigint) =>
        sql`insert into holds (id, account_id, key_id, request_id, amount_nano, tokens, created_at, expires_at)
          values (${id}, ${account}, null, ${requestId}, ${amount}, 0, 0, 1)`.execute(store.db);
      await expect(insertHold("hold_dup_request", accountId, "req_0", 1n)).rejects.toThrow();
      await expect(insertHold("hold_0", accountId, "req_new", 1n)).rejects.toThrow();
      await expect(insertHold("hold_negative", accountId, "req_negative", -1n)).rejects.toThrow();
      await expect(insertHold("hold_orphan", "acct_missing", "req_orphan", 1n)).rejects.toThrow();
      await expect(sql`insert into monthly_usage (account_id, month, cost_nano, tokens, requests) values (${accountId}, '2026-11', 1, 1, 1)`.execute(store.db)).rejects.toThrow();
      await expect(sql`update monthly_usage set tokens = -1 where account_id = ${accountId}`.execute(store.db)).rejects.toThrow();
      if (kind === "sqlite") {
        const tables = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where name in ('holds', 'monthly_usage')`.execute(store.db);
        for (const table of tables.rows) expect(table.sql.toLowerCase()).toContain("without rowid");
        expect(tables.rows).toHaveLength(2);
      }
    });
  });
}
