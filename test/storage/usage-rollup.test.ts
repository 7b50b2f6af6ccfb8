// usage_hourly (migration 0017; ADR 0027): the database keeps it equal to the ledger's usage sums per
// key, hour, account, model and provider, in the transaction of each ledger insert and delete, on
// every path (SQLite settlement, gw_batch, hand-written SQL, prune); a failed settlement leaves neither
// a ledger row nor a rollup change; and the usage answers read from it equal the ledger's own.
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { foldKeyUsage, keyUsageQuery } from "../../src/billing/usage-queries.js";
import { SUMMED_COLUMNS } from "../../src/billing/usage-report.js";
import { usageSummaryQuery } from "../../src/admin/usage-queries.js";
import type { Store } from "../../src/store/index.js";
import { migrate } from "../../src/store/migrate.js";
import { rollupOfLedgerSql } from "../../src/store/dimension-sql.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { admission, chatModel, Clock, makeAccount, makeKey, openTestStore, rollupSummedColumns, usage, useBillingStore } from "../billing/support.js";

const USD = 1_000_000_000n;
const HOUR = 3_600_000;
const DAY = 86_400_000;
const START = Date.UTC(2026, 4, 10, 9, 17, 3);

const plain = (rows: unknown[]) => JSON.parse(JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" || typeof v === "number" ? String(v) : v))) as unknown[];
const ORDER = "order by key_id, hour, account_id, model, provider";

async function rollupRows(store: Store): Promise<unknown[]> {
  return plain((await sql.raw(`select * from usage_hourly ${ORDER}`).execute(store.db)).rows);
}

async function ledgerSums(store: Store): Promise<unknown[]> {
  return plain((await sql.raw(`select * from (${rollupOfLedgerSql(SUMMED_COLUMNS)}) r ${ORDER}`).execute(store.db)).rows);
}

async function failOn(store: Store, table: string, accountId: string): Promise<() => Promise<void>> {
  const id = sql.lit(accountId);
  if (store.dialect === "sqlite") {
    for (const event of ["insert", "update"]) {
      await sql`create trigger ${sql.raw(`fail_${table}_${event}`)} before ${sql.raw(event)} on ${sql.raw(table)}
        when new.account_id = ${id} begin select raise(abort, 'injected failure'); end`.execute(store.db);
    }
    return async () => {
      for (const event of ["insert", "update"]) await sql.raw(`drop trigger fail_${table}_${event}`).execute(store.db);
    };
  }
  await sql.raw(`create function fail_${table}() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`).execute(store.db);
  await sql`create trigger ${sql.raw(`fail_${table}`)} before insert or update on ${sql.raw(table)}
    for each row when (new.account_id = ${id}) execute function ${sql.raw(`fail_${table}`)}()`.execute(store.db);
  return async () => {
    await sql.raw(`drop trigger fail_${table} on ${table}`).execute(store.db);
    await sql.raw(`drop function fail_${table}()`).execute(store.db);
  };
}

for (const kind of DATABASE_KINDS) {
  describe(`usage rollup on ${kind}`, () => {
    let store: Store;
    let billing: StoreBilling;
    const clock = new Clock(START);
    useBillingStore(kind, (f) => ({ store, billing } = f), { now: clock.now });

    // The table as the migrations left it: 0017's columns and those each later dimension's migration added.
    it("usage_hourly sums exactly the columns the usage reports sum", async () => {
      expect(await rollupSummedColumns(store)).toEqual([...SUMMED_COLUMNS].sort());
    });

    it("settlements, alone and concurrent (gw_batch on PostgreSQL), keep it equal to the ledger's sums", async () => {
      const accountId = await makeAccount(store, { balance: 100n * USD });
      const keys = [await makeKey(store, accountId), await makeKey(store, accountId)];
      const models = [chatModel(), chatModel({ id: "other-model" })];
      for (let round = 0; round < 5; round++) {
        await Promise.all(
          Array.from({ length: 12 }, async (_, i) => {
            const hold = await billing.admit({ ...admission(accountId, keys[i % 2]!), model: models[(i >> 1) % 2]! });
            await billing.settle(hold, usage(100 + i, 10 * round, { cachedInputTokens: i }), i % 3 === 0 ? "mock" : "other");
          }),
        );
        clock.advance(HOUR / 2 + 7);
      }
      await store.accounts.adjustBalance(accountId, 5n, "not usage: not summed");
      const rows = await rollupRows(store);
      expect(rows.length).toBeGreaterThan(4);
      expect(rows).toEqual(await ledgerSums(store));
      expect(await store.ledger.verify()).toMatchObject({ broken: null });
    });

    for (const table of ["monthly_usage", "usage_hourly"]) {
      it(`a settlement that fails at ${table} leaves neither a ledger row nor a rollup change`, async () => {
        const accountId = await makeAccount(store, { balance: USD });
        const keyId = await makeKey(store, accountId);
        await billing.settle(await billing.admit(admission(accountId, keyId)), usage(10, 10), "mock");
        const hold = await billing.admit(admission(accountId, keyId));
        const before = { rollup: await rollupRows(store), ledger: await store.ledger.count() };
        const restore = await failOn(store, table, accountId);
        try {
          await expect(billing.settle(hold, usage(100, 100), "mock")).rejects.toMatchObject({ type: "ledger_write_failed" });
          expect({ rollup: await rollupRows(store), ledger: await store.ledger.count() }).toEqual(before);
        } finally {
          await restore();
        }
        expect(await billing.settle(hold, usage(100, 100), "mock")).toMatchObject({ recorded: true });
        expect(await rollupRows(store)).not.toEqual(before.rollup);
        expect(await rollupRows(store)).toEqual(await ledgerSums(store));
      });
    }

    it("/v1/usage and the dashboard answer the same from the rollup as from the ledger alone", async () => {
      const accountId = await makeAccount(store, { balance: 100n * USD });
      const keyId = await makeKey(store, accountId);
      const other = await makeKey(store, accountId);
      const first = clock.ms;
      for (let i = 0; i < 60; i++) {
        const hold = await billing.admit({
          ...admission(i % 5 === 0 ? other : keyId, i % 5 === 0 ? other : keyId),
          accountId,
          model: i % 4 === 0 ? chatModel({ id: "m2" }) : chatModel(),
        });
        await billing.settle(hold, usage(10 + i, 3 * i, { cachedInputTokens: i % 7, reasoningTokens: i % 3 }), "mock");
        clock.advance(HOUR / 3 + 101 * i);
      }
      const last = clock.ms;
      // Windows on and off hour boundaries, inside one hour, whole days, empty, and around everything.
      const windows: Array<[number, number]> = [
        [first, last],
        [first + 1234, last - 98765],
        [Math.floor(first / HOUR) * HOUR, Math.ceil(last / HOUR) * HOUR],
        [first + HOUR + 5, first + HOUR + 1800_000],
        [Math.floor(first / DAY) * DAY, Math.floor(first / DAY) * DAY + 2 * DAY],
        [first - 10 * DAY, first - 9 * DAY],
        [first + 3 * HOUR, first + 3 * HOUR],
      ];
      for (const [start, end] of windows) {
        const fromLedger = foldKeyUsage(keyId, start, end, (await keyUsageQuery(keyId, start, end).execute(store.db)).rows);
        expect(await billing.keyUsage(keyId, { start, end })).toEqual(fromLedger);
      }
      // The dashboard's grouping (key, its account, model, day) over whole days, against the same grouping of the ledger.
      const firstDay = Math.floor(first / DAY);
      const days = Math.ceil((last - firstDay * DAY) / DAY);
      const fromRollup = (await usageSummaryQuery({ accountId }, firstDay * 24, (firstDay + days) * 24).execute(store.db)).rows;
      const fromLedger = (
        await sql`select key_id, account_id, model, created_at / ${sql.lit(DAY)} as day, count(*) as requests,
          ${sql.join(SUMMED_COLUMNS.map((c) => sql`cast(sum(${sql.ref(c)}) as bigint) as ${sql.ref(c)}`))}
          from ledger where account_id = ${accountId} and kind = 'usage' and created_at >= ${BigInt(firstDay * DAY)} and created_at < ${BigInt((firstDay + days) * DAY)}
          group by key_id, account_id, model, created_at / ${sql.lit(DAY)}`.execute(store.db)
      ).rows;
      const sorted = (rows: unknown[]) => plain(rows).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
      expect(fromRollup.length).toBeGreaterThan(2);
      expect(sorted(fromRollup)).toEqual(sorted(fromLedger));
    });

    it("a prune subtracts the deleted rows", async () => {
      // No opening balance: its row, younger than the cutoff, would come first in the chain and keep the rest.
      const accountId = await makeAccount(store);
      const old = BigInt(clock.ms - 400 * DAY);
      await sql`insert into ledger (created_at, account_id, key_id, request_id, kind, model, provider, input_tokens, output_tokens, cost_nano)
        values (${old}, ${accountId}, 'key_old', 'req_old_1', 'usage', 'mock-chat', 'mock', 5, 6, 70),
               (${old + 1000n}, ${accountId}, 'key_old', 'req_old_2', 'usage', 'mock-chat', 'mock', 1, 2, 30),
               (${old + 2n * BigInt(HOUR)}, ${accountId}, null, 'req_old_3', 'usage', null, null, 1, 1, 1)`.execute(store.db);
      expect(await rollupRows(store)).toEqual(await ledgerSums(store));
      expect(await store.ledger.prune(365, clock.ms)).toBeGreaterThanOrEqual(3);
      const left = (await rollupRows(store)) as Array<{ key_id: string }>;
      expect(left.filter((r) => r.key_id === "key_old")).toEqual([]);
      expect(left).toEqual(await ledgerSums(store));
    });
  });

  describe(`migration 0017 on ${kind}`, () => {
    it("sums the usage rows written before it, then the triggers carry on", { timeout: 60_000 }, async () => {
      const database = await createTestDatabase(kind);
      const store = await openTestStore(database, false);
      try {
        await migrate(store.handle, "0016-codes-and-upstream-errors");
        const accountId = await makeAccount(store, { balance: USD });
        const now = BigInt(Date.now());
        await sql`insert into ledger (created_at, account_id, key_id, request_id, kind, model, provider, input_tokens, output_tokens, cost_nano, output_cost_nano)
          select cast(${now} as bigint) - i * 600000, ${accountId}, case when i % 3 = 0 then null else 'key_' || (i % 2) end, 'old-' || i,
            case when i % 10 = 0 then 'credit' else 'usage' end, case when i % 4 = 0 then null else 'm' || (i % 3) end, 'p', i, 2 * i, 7 * i, 5 * i
          from (select 1 as i union all select 2 union all select 3 union all select 4 union all select 5 union all select 6
                union all select 7 union all select 8 union all select 9 union all select 10 union all select 11 union all select 12) n`.execute(store.db);
        // To the latest schema (the billing functions are created only then); 0017 first, the later ones after it.
        expect((await migrate(store.handle)).applied[0]).toBe("0017-usage-rollup");
        const rows = await rollupRows(store);
        expect(rows.length).toBeGreaterThan(3);
        expect(rows).toEqual(await ledgerSums(store));
        const billing = new StoreBilling(store.handle);
        try {
          const keyId = await makeKey(store, accountId);
          await billing.settle(await billing.admit(admission(accountId, keyId)), usage(10, 10), "mock");
        } finally {
          await billing.stopSweeper();
        }
        expect(await rollupRows(store)).toEqual(await ledgerSums(store));
        expect(await store.ledger.verify()).toMatchObject({ broken: null });
      } finally {
        await store.close();
        await database.drop();
      }
    });
  });
}
