// gw_batch keeps each statement's plan for the session (PL/pgSQL), planned once with the statistics of
// that moment. Statistics taken while holds was empty (an ANALYZE at a quiet moment) made the plan of
// the settlement's and the release's `delete from holds where id = …` a sequential scan, which then
// read every hold, live or dead, on every settlement for the rest of the connection's life: measured
// with a 5-million-row ledger (bench/results/history/2026-11-25T1040-pg-pairs-filled-ledger.md), the server's CPU per pair grew from
// 333 to 547 µs over 18,000 pairs. gw_batch runs with enable_seqscan off (gw-batch-function.ts).
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { migrate } from "../../src/store/migrate.js";
import { openStore, type Store } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { admission, makeAccount, makeKey, usage } from "./support.js";

describe.runIf(DATABASE_KINDS.includes("postgres"))("gw_batch on PostgreSQL", () => {
  let database: TestDatabase;
  let store: Store;
  let billing: StoreBilling;
  beforeAll(async () => {
    database = await createTestDatabase("postgres");
    // One connection: the batches and the statistics queries below share a session.
    store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: "test-secret-0123456789", poolSize: 1 });
    billing = new StoreBilling(store.handle);
  });
  afterAll(async () => {
    await store?.close();
    await database?.drop();
  });

  /** The session's counts for `table` so far: they are flushed first, so that they are in the view. */
  async function tableStats(table: string): Promise<{ sequential: number; index: number; updated: number }> {
    await sql`select pg_stat_force_next_flush()`.execute(store.db);
    const { rows } = await sql<{ seq_scan: string; idx_scan: string | null; n_tup_upd: string }>`
      select seq_scan, idx_scan, n_tup_upd from pg_stat_user_tables where relname = ${table}`.execute(store.db);
    return { sequential: Number(rows[0]!.seq_scan), index: Number(rows[0]!.idx_scan ?? 0), updated: Number(rows[0]!.n_tup_upd) };
  }
  const holdScans = () => tableStats("holds");

  it("settles and releases holds through their index after statistics that said holds was empty", async () => {
    const account = await makeAccount(store, { balance: 10n ** 12n });
    const key = await makeKey(store, account);
    await sql`analyze holds`.execute(store.db);
    const before = await holdScans();
    for (let i = 0; i < 10; i++) {
      await billing.settle(await billing.admit(admission(account, key)), usage(100, 50), "mockai");
      await billing.release(await billing.admit(admission(account, key)));
    }
    const after = await holdScans();
    expect(after.sequential - before.sequential).toBe(0);
    expect(after.index - before.index).toBeGreaterThanOrEqual(20);
    expect(await store.db.selectFrom("holds").select("id").execute()).toEqual([]);
  });

  it("updates the account row once per call: the ledger head with the balance", async () => {
    const account = await makeAccount(store, { balance: 10n ** 12n });
    const key = await makeKey(store, account);
    const before = await tableStats("accounts");
    for (let i = 0; i < 5; i++) await billing.settle(await billing.admit(admission(account, key)), usage(100, 50), "mockai");
    const after = await tableStats("accounts");
    // 10 calls of one operation each (5 admissions, 5 settlements): one UPDATE each, none from the head trigger.
    expect(after.updated - before.updated).toBe(10);
    const last = await store.db.selectFrom("ledger").select("hash").where("account_id", "=", account).orderBy("id", "desc").limit(1).executeTakeFirstOrThrow();
    const { ledger_head } = await store.db.selectFrom("accounts").select("ledger_head").where("id", "=", account).executeTakeFirstOrThrow();
    expect(ledger_head).toBe(last.hash);
    expect(await store.ledger.verify()).toMatchObject({ broken: null });
  });

  it("drops the previous version's gw_put_account when the billing functions are created again", async () => {
    // As a database of the previous version has it: without the head argument.
    await sql`create function gw_put_account(p_id text, p_balance bigint, p_held bigint, p_held_tokens bigint, p_spent bigint)
      returns void language plpgsql as $$ begin end $$`.execute(store.db);
    await migrate(store.handle);
    const { rows } = await sql<{ args: string }>`select pg_get_function_identity_arguments(oid) as args from pg_proc where proname = 'gw_put_account'`.execute(store.db);
    expect(rows.map((row) => row.args)).toEqual(["p_id text, p_balance bigint, p_held bigint, p_held_tokens bigint, p_spent bigint, p_head text"]);
  });

  it("refuses an operation with positional arguments, as a process of the version before migration 0021 sends it", async () => {
    const positional = JSON.stringify([{ k: "release", a: ["hold_none", null] }]);
    await expect(sql`select gw_batch(${positional}::jsonb)`.execute(store.db)).rejects.toThrow(/positional arguments: this gateway process predates migration 0021/);
  });

  it("migration 0021 drops the positional gw_batch; the run that applies it creates the named one", async () => {
    const older = await createTestDatabase("postgres");
    const upgraded = await openStore({ databaseUrl: older.databaseUrl, sqlitePath: older.sqlitePath, secret: "test-secret-0123456789", migrate: false });
    const definition = async () => (await sql<{ def: string | null }>`select pg_get_functiondef(to_regprocedure('gw_batch(jsonb)')) as def`.execute(upgraded.db)).rows[0]!.def;
    try {
      // A run stopped early creates no billing function: the positional gw_batch of migration 0002 is there.
      await migrate(upgraded.handle, "0020-ledger-chain-lookups");
      expect(await definition()).toContain("a->>");
      await migrate(upgraded.handle, "0021-named-billing-operations");
      expect(await definition()).toBeNull();
      await migrate(upgraded.handle);
      expect(await definition()).toContain("r := op->'row'");
    } finally {
      await upgraded.close();
      await older.drop();
    }
  });
});
