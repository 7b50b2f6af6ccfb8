// The ledger's hash chain (ADR 0011) on both databases: what the database's trigger writes is what the
// TypeScript verifier computes; `gateway admin ledger verify` names a row altered or deleted behind the
// append-only triggers' back; migration 0010 chains rows written before it; a settlement that fails
// midway and a replayed one leave the chain as it was.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { LEDGER_GENESIS_HASH, ledgerRowHash } from "../../src/store/ledger-chain.js";
import type { Store } from "../../src/store/index.js";
import { migrate } from "../../src/store/migrate.js";
import { admission, makeAccount, makeKey, openTestStore, usage } from "../billing/support.js";
import { createHarness, type CliHarness } from "../cli/harness.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";

const USD = 1_000_000_000n;

interface VerifyJson {
  ok: boolean;
  accounts: number;
  rows: number;
  broken: { row_id: string | null; account_id: string; where: "row" | "head"; expected: string; found: string | null } | null;
  keyed: unknown;
  differences: Array<{ table: string; id: string; account_id: string; field: string; stored: string; recomputed: string }>;
  differences_truncated: boolean;
}

/** Runs a change the append-only triggers refuse: SQLite has no switch, so they are dropped and re-created. */
async function behindTheTriggers(store: Store, change: () => Promise<void>): Promise<void> {
  if (store.dialect === "postgres") {
    await sql`alter table ledger disable trigger user`.execute(store.db);
    try {
      await change();
    } finally {
      await sql`alter table ledger enable trigger user`.execute(store.db);
    }
    return;
  }
  const { rows } = await sql<{ name: string; sql: string }>`select name, sql from sqlite_master where type = 'trigger' and tbl_name = 'ledger'`.execute(store.db);
  expect(rows.length).toBeGreaterThan(0);
  for (const trigger of rows) await sql.raw(`drop trigger ${trigger.name}`).execute(store.db);
  try {
    await change();
  } finally {
    for (const trigger of rows) await sql.raw(trigger.sql).execute(store.db);
  }
}

async function ledgerRows(store: Store, accountId: string) {
  return store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).orderBy("id").execute();
}

async function verifyCli(cli: CliHarness, args: string[] = []): Promise<{ code: number; report: VerifyJson; stderr: string }> {
  const result = await cli.run(["admin", "ledger", "verify", ...args, "--json"]);
  return { code: result.code, report: JSON.parse(result.stdout) as VerifyJson, stderr: result.stderr };
}

for (const kind of DATABASE_KINDS) {
  describe(`ledger hash chain on ${kind}`, () => {
    let cli: CliHarness;
    let store: Store;
    let billing: StoreBilling;

    beforeAll(async () => {
      cli = await createHarness(kind);
      store = await openTestStore(cli.database);
      billing = new StoreBilling(store.handle);
    });
    afterAll(async () => {
      await billing?.stopSweeper();
      await store?.close();
      await cli?.close();
    });

    /** An account with an opening credit, a debit and `settlements` settled requests, plus a replay. */
    async function busyAccount(settlements: number): Promise<{ accountId: string; keyId: string }> {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      await store.accounts.adjustBalance(accountId, -1000n, "débit ✓ with\nnewline");
      for (let i = 0; i < settlements; i++) {
        const hold = await billing.admit(admission(accountId, keyId));
        await billing.settle(hold, usage(100 + i, 50 + i), "mock");
        if (i === 0) expect(await billing.settle(hold, usage(100, 50), "mock")).toMatchObject({ recorded: false });
      }
      return { accountId, keyId };
    }

    it("the database writes each row's hash over the previous one exactly as the verifier computes it", async () => {
      const { accountId } = await busyAccount(3);
      const rows = await ledgerRows(store, accountId);
      expect(rows.map((r) => r.kind)).toEqual(["credit", "debit", "usage", "usage", "usage"]);
      let previous = LEDGER_GENESIS_HASH;
      for (const row of rows) {
        expect(row.hash).toBe(ledgerRowHash(previous, row));
        previous = row.hash!;
      }
      const account = await store.db.selectFrom("accounts").select(["ledger_head", "ledger_anchor"]).where("id", "=", accountId).executeTakeFirstOrThrow();
      expect(account).toEqual({ ledger_head: previous, ledger_anchor: null });

      const { code, report } = await verifyCli(cli, ["--account", accountId]);
      expect(code).toBe(0);
      expect(report).toEqual({ ok: true, accounts: 1, rows: 5, broken: null, keyed: null, differences: [], differences_truncated: false });
      const text = await cli.run(["admin", "ledger", "verify"]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/^ledger intact: \d+ accounts, \d+ rows checked; balances, spend and usage match it\n$/);
    });

    it("a cost altered in the database: verify exits 1 naming the row, expected and found hash", async () => {
      const { accountId } = await busyAccount(4);
      const rows = await ledgerRows(store, accountId);
      const target = rows[3]!;
      await behindTheTriggers(store, async () => {
        await sql`update ledger set cost_nano = cost_nano + 1 where id = ${target.id}`.execute(store.db);
      });
      const previous = rows[2]!.hash!;
      const expected = ledgerRowHash(previous, { ...target, cost_nano: target.cost_nano + 1n });

      const { code, report } = await verifyCli(cli, ["--account", accountId]);
      expect(code).toBe(1);
      expect(report.ok).toBe(false);
      expect(report.broken).toEqual({ row_id: String(target.id), account_id: accountId, where: "row", expected, found: target.hash });
      // Without --account the walk covers every account and stops at the same first broken link.
      const all = await verifyCli(cli);
      expect(all.code).toBe(1);
      expect(all.report.broken).toMatchObject({ row_id: String(target.id), account_id: accountId });
      const text = await cli.run(["admin", "ledger", "verify", "--account", accountId]);
      expect(text.code).toBe(1);
      expect(text.stdout).toContain(`ledger chain broken at row ${target.id} (account ${accountId}): expected hash ${expected}, found ${target.hash}`);
    });

    // After the walk over every account above: this leaves a broken link on SQLite.
    it("a row inserted with a forged hash is named by verify, and the balance it does not explain", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      // PostgreSQL's trigger overwrites the hash; SQLite's keeps a hash given (settlement gives its own).
      await sql`insert into ledger (created_at, account_id, request_id, kind, cost_nano, hash)
        values (${BigInt(Date.now())}, ${accountId}, ${`forged-${kind}`}, 'credit', 5, ${"f".repeat(64)})`.execute(store.db);
      const row = await store.db.selectFrom("ledger").selectAll().where("request_id", "=", `forged-${kind}`).executeTakeFirstOrThrow();
      const opening = (await ledgerRows(store, accountId))[0]!;
      const { code, report } = await verifyCli(cli, ["--account", accountId]);
      // The chain has no key here: PostgreSQL's trigger chains the row like any other (a keyed chain
      // refuses or names it: ledger-verify.test.ts), but the balance no longer adds up.
      expect(code).toBe(1);
      expect(report.differences).toEqual([{ table: "accounts", id: accountId, account_id: accountId, field: "balance_nano", stored: String(USD), recomputed: String(USD + 5n) }]);
      if (kind === "postgres") {
        expect(row.hash).toBe(ledgerRowHash(opening.hash!, row));
        expect(report.broken).toBeNull();
      } else {
        expect(report.broken).toEqual({ row_id: String(row.id), account_id: accountId, where: "row", expected: ledgerRowHash(opening.hash!, row), found: "f".repeat(64) });
      }
    });

    it("a deleted row breaks the link of the next one; a deleted last row, the account's head", async () => {
      const middle = await busyAccount(3);
      const rows = await ledgerRows(store, middle.accountId);
      await behindTheTriggers(store, async () => {
        await sql`delete from ledger where id = ${rows[2]!.id}`.execute(store.db);
      });
      const { code, report } = await verifyCli(cli, ["--account", middle.accountId]);
      expect(code).toBe(1);
      expect(report.broken).toEqual({
        row_id: String(rows[3]!.id),
        account_id: middle.accountId,
        where: "row",
        expected: ledgerRowHash(rows[1]!.hash!, rows[3]!),
        found: rows[3]!.hash,
      });

      const tail = await busyAccount(2);
      const tailRows = await ledgerRows(store, tail.accountId);
      const last = tailRows[tailRows.length - 1]!;
      await behindTheTriggers(store, async () => {
        await sql`delete from ledger where id = ${last.id}`.execute(store.db);
      });
      const head = await verifyCli(cli, ["--account", tail.accountId]);
      expect(head.code).toBe(1);
      expect(head.report.broken).toEqual({
        row_id: String(tailRows[tailRows.length - 2]!.id),
        account_id: tail.accountId,
        where: "head",
        expected: tailRows[tailRows.length - 2]!.hash,
        found: last.hash,
      });
    });

    it("a settlement that fails midway leaves the chain and its head as they were", async () => {
      const { accountId, keyId } = await busyAccount(1);
      const before = await store.db.selectFrom("accounts").select("ledger_head").where("id", "=", accountId).executeTakeFirstOrThrow();
      const hold = await billing.admit(admission(accountId, keyId));
      // The monthly_usage write comes after the ledger row in both databases' settlement.
      if (kind === "sqlite") {
        await sql`create trigger fail_monthly before update on monthly_usage when new.account_id = ${sql.lit(accountId)}
          begin select raise(abort, 'injected failure'); end`.execute(store.db);
      } else {
        await sql`create function fail_monthly() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`.execute(store.db);
        await sql`create trigger fail_monthly before update on monthly_usage for each row when (new.account_id = ${sql.lit(accountId)})
          execute function fail_monthly()`.execute(store.db);
      }
      try {
        // Other accounts' settlements in the same batch must still be chained.
        const other = await busyAccount(0);
        const otherHold = await billing.admit(admission(other.accountId, other.keyId));
        const [failed, ok] = await Promise.allSettled([billing.settle(hold, usage(100, 100), "mock"), billing.settle(otherHold, usage(10, 10), "mock")]);
        expect(failed).toMatchObject({ status: "rejected", reason: { type: "ledger_write_failed" } });
        expect(ok).toMatchObject({ status: "fulfilled", value: { recorded: true } });
        expect(await store.db.selectFrom("accounts").select("ledger_head").where("id", "=", accountId).executeTakeFirstOrThrow()).toEqual(before);
        expect((await verifyCli(cli, ["--account", accountId])).report).toMatchObject({ ok: true, rows: 3 });
        expect((await verifyCli(cli, ["--account", other.accountId])).report).toMatchObject({ ok: true, rows: 3 });
      } finally {
        if (kind === "sqlite") await sql`drop trigger fail_monthly`.execute(store.db);
        else await sql`drop trigger fail_monthly on monthly_usage`.execute(store.db).then(() => sql`drop function fail_monthly()`.execute(store.db));
      }
      expect(await billing.settle(hold, usage(100, 100), "mock")).toMatchObject({ recorded: true });
      expect((await verifyCli(cli, ["--account", accountId])).report).toMatchObject({ ok: true, rows: 4 });
    });

    it("reports progress page by page", async () => {
      const { accountId } = await busyAccount(3);
      const seen: number[] = [];
      const result = await store.ledger.verify({ accountId, pageRows: 2, onProgress: (p) => seen.push(p.rows) });
      expect(result).toEqual({ accounts: 1, rows: 5, broken: null });
      expect(seen).toEqual([2, 4, 5]);
    });
  });

  describe(`migration 0010 on ${kind}`, () => {
    it("chains the rows written before it, in id order, across pages and accounts", { timeout: 60_000 }, async () => {
      const database = await createTestDatabase(kind);
      const store = await openTestStore(database, false);
      try {
        await migrate(store.handle, "0007-ledger-deployment");
        const first = await makeAccount(store, { balance: USD });
        const second = await makeAccount(store, { balance: 2n * USD });
        const now = BigInt(Date.now());
        // 2,500 rows alternating between the two accounts (more than two of the migration's pages).
        await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 2500)
          insert into ledger (created_at, account_id, key_id, request_id, kind, model, input_tokens, output_tokens, cost_nano, note, deployment)
          select cast(${now} as bigint) + i, case when i % 2 = 0 then ${first} else ${second} end, null, 'old-' || i, 'usage', 'gpt-x', i, 2 * i, 7 * i,
            case when i % 7 = 0 then 'shortfall_nano=' || i end, case when i % 5 = 0 then 'east-é' end
          from n`.execute(store.db);
        // A credit as the code of that schema wrote it (today's adjustBalance also writes tables
        // that later migrations create, such as alert_events).
        await sql`insert into ledger (created_at, account_id, key_id, request_id, kind, model, input_tokens, output_tokens, cost_nano, note)
          values (${now + 3000n}, ${first}, null, 'credit-old', 'credit', null, 0, 0, 5, 'crédit')`.execute(store.db);
        await sql`update accounts set balance_nano = balance_nano + 5 where id = ${first}`.execute(store.db);

        expect((await migrate(store.handle)).applied).toContain("0010-ledger-hash-chain");
        const result = await store.ledger.verify();
        expect(result).toEqual({ accounts: 2, rows: 2503, broken: null });
        const unchained = await store.db.selectFrom("ledger").select("id").where("hash", "is", null).execute();
        expect(unchained).toEqual([]);

        // Rows appended after the migration continue each chain from its head.
        await store.accounts.adjustBalance(second, -3n, null);
        const billing = new StoreBilling(store.handle);
        try {
          const keyId = await makeKey(store, first);
          await billing.settle(await billing.admit(admission(first, keyId)), usage(10, 10), "mock");
        } finally {
          await billing.stopSweeper();
        }
        expect(await store.ledger.verify()).toEqual({ accounts: 2, rows: 2505, broken: null });
      } finally {
        await store.close();
        await database.drop();
      }
    });
  });
}
