// The ledger-growth step's small version (issue 26 item 3; the 10-million-row one is in `npm run bench`,
// bench/ledger-growth.ts): a 100,000-row ledger filled by the bench's generator, whose rows the chain
// verifier accepts and whose rollup equals the ledger's sums, and the plan of every query the step
// times, checked with EXPLAIN on both databases: each reads the index it is meant to, with no full
// scan and no sort. LEDGER_PLAN_ROWS overrides the size; LEDGER_SHOW_PLANS prints the plans.
import { CompiledQuery, sql } from "kysely";
import { describe, expect, it } from "vitest";
import { fillLedger, type LedgerFillResult } from "../../bench/lib/ledger-fill.js";
import { keyUsageQuery } from "../../src/billing/usage-queries.js";
import { HOUR_MS, keyRollupQuery, splitWindow } from "../../src/billing/usage-rollup.js";
import { CSV_PAGE_ROWS } from "../../src/dashboard/ledger-csv.js";
import { ledgerPageQuery, usageAcrossAccountsQuery, usageSummaryQuery } from "../../src/admin/usage-queries.js";
import { usageByWorkspaceQuery } from "../../src/admin/usage-breakdowns.js";
import { tagUsageQuery } from "../../src/billing/tag-usage.js";
import type { Store } from "../../src/store/index.js";
import { pruneQueries } from "../../src/store/ledger-store.js";
import { SUMMED_COLUMNS } from "../../src/billing/usage-report.js";
import { rollupOfLedgerSql } from "../../src/store/dimension-sql.js";
import { nextChainRowSql, previousChainRowSql } from "../../src/store/ledger-chain-sql.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { useBillingStore } from "./support.js";

const ROWS = Number(process.env.LEDGER_PLAN_ROWS ?? 100_000);
const DAY = 86_400_000;
const NOW = Date.UTC(2026, 5, 15, 13, 45, 12, 345);

/** A raw query compiles against a database; a query builder knows its own (and ignores the argument). */
async function planOf(store: Store, query: { compile(db: Store["db"]): CompiledQuery<unknown> }): Promise<string> {
  const compiled = query.compile(store.db);
  const explain = store.dialect === "sqlite" ? "explain query plan " : "explain ";
  const { rows } = await store.db.executeQuery(CompiledQuery.raw(explain + compiled.sql, [...compiled.parameters]));
  const text = rows.map((row) => Object.values(row as Record<string, unknown>).join(" ")).join("\n");
  if (process.env.LEDGER_SHOW_PLANS) console.log(`${store.dialect}: ${compiled.sql.replace(/\s+/g, " ").slice(0, 90)}…\n${text}\n`);
  return text;
}

/** No full scan of `table` and no sort step, on either database. */
function expectNoScanNorSort(plan: string, table: string): void {
  expect(plan).not.toMatch(new RegExp(`SCAN ${table}(?! USING)|Seq Scan on ${table}`));
  expect(plan).not.toMatch(/USE TEMP B-TREE FOR ORDER BY|\bSort\b/);
}

for (const kind of DATABASE_KINDS) {
  describe(`ledger growth on ${kind}: ${ROWS} rows`, () => {
    const PAGE_PLAN =
      kind === "sqlite" ? /SEARCH ledger USING INDEX ledger_account_chain \(account_id=\?( AND id<\?)?\)/ : /Index Scan Backward using ledger_account_chain on ledger/;
    let store: Store;
    let fill: LedgerFillResult;
    let postgresUrl: string | null;
    useBillingStore(
      kind,
      (f) =>
        ({
          store,
          database: { databaseUrl: postgresUrl },
        } = f),
    );

    it("the generator's rows are valid: the chain verifies and the rollup equals the ledger's sums", { timeout: 300_000 }, async () => {
      fill = await fillLedger(store, { rows: ROWS, busyKeyRows: ROWS / 10, otherAccounts: 20, now: NOW, postgresUrl });
      expect(fill.rows).toBe(ROWS);
      expect(await store.ledger.verify()).toEqual({ accounts: 21, rows: ROWS + 21, broken: null });
      // Both ways round: a group missing from either side, or summed differently, is a row of one EXCEPT.
      for (const [a, b] of [
        [rollupOfLedgerSql(SUMMED_COLUMNS), "select * from usage_hourly"],
        ["select * from usage_hourly", rollupOfLedgerSql(SUMMED_COLUMNS)],
      ]) {
        const { rows } = await sql.raw(`select count(*) as n from (${a} except ${b}) d`).execute(store.db);
        expect(Number((rows[0] as { n: unknown }).n)).toBe(0);
      }
      const { rows: groups } = await sql.raw(`select count(*) as n from usage_hourly`).execute(store.db);
      expect(Number((groups[0] as { n: unknown }).n)).toBeGreaterThan(1000);
      const busy = await store.db
        .selectFrom("ledger")
        .select((eb) => eb.fn.countAll<bigint>().as("n"))
        .where("key_id", "=", fill.busyKeyId)
        .executeTakeFirstOrThrow();
      expect(Number(busy.n)).toBe(ROWS / 10);
    });

    it("/v1/usage over 30 days: the key's range of the rollup's primary key, the edges on ledger_key_time", async () => {
      const end = NOW + 1;
      const window = splitWindow(end - 30 * DAY, end);
      expect(window.endHour - window.firstHour).toBe((30 * DAY) / HOUR_MS - 1);
      const rollup = await planOf(store, keyRollupQuery(fill.busyKeyId, window.firstHour, window.endHour));
      // SQLite: the rollup is a WITHOUT ROWID table, its primary key b-tree holds the sums: index-only.
      // PostgreSQL: the key's range of the primary key, or the window's range of usage_hourly_hour. The
      // rollup's rows lie in time order (as the trigger writes them), so the hour index reads the heap
      // in order, and here the busy key holds over half the window's rows: the planner may rightly
      // prefer it. Either reads only the window's rollup rows.
      expect(rollup).toMatch(
        store.dialect === "sqlite"
          ? /SEARCH usage_hourly USING PRIMARY KEY \(key_id=\? AND hour>\? AND hour<\?\)/
          : /Index Scan using usage_hourly_pk on usage_hourly|Bitmap Index Scan on usage_hourly_pk|Index Scan using usage_hourly_hour on usage_hourly\s+\(.*\)\s+Index Cond: \(\(hour >= '\d+'::bigint\) AND \(hour < '\d+'::bigint\)\)/,
      );
      expect(rollup).not.toMatch(/SCAN usage_hourly(?! USING)|Seq Scan on usage_hourly/);
      expect(window.edges).toHaveLength(2);
      for (const edge of window.edges) {
        const plan = await planOf(store, keyUsageQuery(fill.busyKeyId, edge.start, edge.end));
        // A partial hour: the key's range of ledger_key_time, at most one hour of the ledger.
        expect(plan).toMatch(/ledger_key_time/);
        expect(plan).not.toMatch(/SCAN ledger(?! USING)|Seq Scan on ledger/);
      }
    });

    it("the dashboard's usage views: usage_hourly_account for an account, usage_hourly_hour across accounts", async () => {
      const today = Math.floor(NOW / DAY);
      const account = await planOf(store, usageSummaryQuery({ accountId: fill.busyAccountId }, (today - 29) * 24, (today + 1) * 24));
      // Or (SQLite's choice with few keys, by its statistics) a skip-scan of the primary key: one hour
      // range per key; or (PostgreSQL's, as for /v1/usage above) the window's range of usage_hourly_hour.
      // Each reads only the window's rollup rows.
      expect(account, account).toMatch(
        /usage_hourly_account|USING PRIMARY KEY \(ANY\(key_id\) AND hour>\? AND hour<\?\)|Index Scan using usage_hourly_hour on usage_hourly\s+\(.*\)\s+Index Cond: \(\(hour >= '\d+'::bigint\) AND \(hour < '\d+'::bigint\)\)/,
      );
      expect(account, account).not.toMatch(/SCAN usage_hourly(?! USING)|Seq Scan on usage_hourly/);
      const across = await planOf(store, usageAcrossAccountsQuery((today - 6) * 24, (today + 1) * 24));
      // The window's range of usage_hourly_hour, or (SQLite's choices with few accounts and keys) a
      // skip-scan of usage_hourly_account or of the primary key, one hour range per account or key.
      expect(across, across).toMatch(
        /usage_hourly_hour|usage_hourly_account \(ANY\(account_id\) AND hour>\? AND hour<\?\)|USING PRIMARY KEY \(ANY\(key_id\) AND hour>\? AND hour<\?\)/,
      );
      expect(across, across).not.toMatch(/SCAN usage_hourly(?! USING)|Seq Scan on usage_hourly/);
      expect(across, across).not.toMatch(/ledger/);
    });

    it("the report across accounts by workspace and by tag: the window's rollup rows (keys by primary key), each account's range of ledger_tags_account_time", async () => {
      const today = Math.floor(NOW / DAY);
      const workspaces = await planOf(store, usageByWorkspaceQuery((today - 6) * 24, (today + 1) * 24));
      expect(workspaces, workspaces).toMatch(/usage_hourly_hour|usage_hourly_account|USING PRIMARY KEY \(ANY\(key_id\)/);
      expect(workspaces, workspaces).not.toMatch(/SCAN u(?! USING)|Seq Scan on usage_hourly/);
      // The generator writes no tags: one on every other usage row, so that the plan reads a tagged ledger.
      await sql`insert into ledger_tags (ledger_id, tag, account_id, created_at, cost_nano, tokens)
        select id, 'team=plan', account_id, created_at, cost_nano, input_tokens + output_tokens from ledger where kind = 'usage' and id % 2 = 0`.execute(store.db);
      await sql`analyze`.execute(store.db);
      const tags = await planOf(store, tagUsageQuery({ allAccounts: store.dialect }, (today - 6) * DAY, (today + 1) * DAY));
      // Each account's time range, or (SQLite's choice by its statistics) each tag's: an index range either way.
      expect(tags, tags).toMatch(/ledger_tags_account_time|ledger_tags_tag_time/);
      expect(tags, tags).not.toMatch(/SCAN [lt](?! USING)|Seq Scan on ledger/);
    });

    it("the ledger page and the CSV's pages: a backward range of ledger_account_chain, no sort", async () => {
      const small = (await store.db.selectFrom("keys").select("account_id").where("id", "=", fill.otherKeyIds[0]!).executeTakeFirstOrThrow()).account_id;
      const smallPlan = await planOf(store, ledgerPageQuery(store, small, { limit: 51, before: 1_000_000n }));
      expect(smallPlan).toMatch(PAGE_PLAN);
      expectNoScanNorSort(smallPlan, "ledger");
      const first = await planOf(store, ledgerPageQuery(store, fill.busyAccountId, { limit: 51 }));
      const next = await planOf(store, ledgerPageQuery(store, fill.busyAccountId, { limit: 51, before: 1_000_000n }));
      const csv = await planOf(store, ledgerPageQuery(store, fill.busyAccountId, { limit: CSV_PAGE_ROWS, before: 1_000_000n }));
      for (const plan of [first, next, csv]) {
        expect(plan).toMatch(PAGE_PLAN);
        expectNoScanNorSort(plan, "ledger");
      }
    });

    if (kind === "postgres")
      it("the chain triggers' lookups, as PL/pgSQL caches them (generic plans): a range of ledger_account_chain", async () => {
        // The trigger functions' statements, parameterised as PL/pgSQL runs them; a generic plan does not
        // see the account, so it must not trade the account's range for the primary key's end.
        const statements = [previousChainRowSql("$1"), nextChainRowSql("$1", "$2::bigint")];
        const source = (
          await sql<{ source: string }>`select string_agg(prosrc, ' ') as source from pg_proc where proname in ('ledger_chain', 'ledger_chain_head')`.execute(store.db)
        ).rows[0]!.source;
        expect(source).toContain(previousChainRowSql("new.account_id"));
        expect(source).toContain(nextChainRowSql("new.account_id", "new.id"));
        const small = (await store.db.selectFrom("keys").select("account_id").where("id", "=", fill.otherKeyIds[0]!).executeTakeFirstOrThrow()).account_id;
        await store.db.connection().execute(async (connection) => {
          await sql`set plan_cache_mode = force_generic_plan`.execute(connection);
          try {
            for (const [i, statement] of statements.entries()) {
              await sql.raw(`prepare chain_lookup_${i} as ${statement}`).execute(connection);
              const args = i === 0 ? `'acct_absent'` : `'${small}', 0`;
              const { rows } = await sql.raw(`explain execute chain_lookup_${i}(${args})`).execute(connection);
              const plan = rows.map((row) => Object.values(row as Record<string, unknown>).join(" ")).join("\n");
              if (process.env.LEDGER_SHOW_PLANS) console.log(`generic: ${statement}\n${plan}\n`);
              expect(plan).toMatch(/Index (Only )?Scan (Backward )?using ledger_account_chain on ledger/);
              expect(plan).toMatch(/Index Cond: \(ROW\(account_id, id\) [<>] ROW\(\$1, /);
              expect(plan).not.toMatch(/ledger_pkey|Filter:/);
              expectNoScanNorSort(plan, "ledger");
              await sql.raw(`deallocate chain_lookup_${i}`).execute(connection);
            }
          } finally {
            await sql`reset plan_cache_mode`.execute(connection);
          }
        });
      });

    it("ledger prune's searches: an account's rows in id order on ledger_account_chain, no sort", async () => {
      // No index on (account_id, created_at) since migration 0019: the prune walks ledger_account_chain.
      const { rows: indexes } = await sql
        .raw(
          kind === "sqlite" ? `select name from sqlite_master where type = 'index' and tbl_name = 'ledger'` : `select indexname as name from pg_indexes where tablename = 'ledger'`,
        )
        .execute(store.db);
      expect(indexes.map((row) => (row as { name: string }).name)).not.toContain("ledger_account_time");
      const cutoff = BigInt(NOW - 200 * DAY);
      for (const query of [pruneQueries.oldest(store.db, fill.busyAccountId), pruneQueries.firstKept(store.db, fill.busyAccountId, cutoff)]) {
        const plan = await planOf(store, query);
        expect(plan).toMatch(
          kind === "sqlite" ? /SEARCH ledger USING INDEX ledger_account_chain \(account_id>\? AND account_id<\?\)/ : /Index Scan using ledger_account_chain on ledger/,
        );
        expectNoScanNorSort(plan, "ledger");
      }
    });
  });
}
