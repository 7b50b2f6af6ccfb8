// `gateway admin ledger verify` does not trust the stored figures (issue 39 item 8; ADR 0032), on both
// databases: it recomputes every account's balance, spend and holds, every key's spend, tokens and
// holds, the monthly usage and the hourly rollup from the ledger and names each figure edited with
// plain SQL; with GATEWAY_LEDGER_SECRET the chain is keyed (HMAC), so a row inserted with plain SQL
// (which cannot know the key), even with the balance raised to match, is named too.
import SqliteDatabase from "better-sqlite3";
import { sql } from "kysely";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { verifyProgress } from "../../src/cli/commands/ledger.js";
import { LedgerChainKey } from "../../src/store/ledger-chain-key.js";
import { LEDGER_CHAIN_COLUMNS, LEDGER_GENESIS_HASH, ledgerRowHash, ledgerRowHashFromValues, SQLITE_LEDGER_HASH_FUNCTION } from "../../src/store/ledger-chain.js";
import { openStore, type Store } from "../../src/store/index.js";
import { LEDGER_RECOMPUTE_STEPS } from "../../src/store/ledger-recompute.js";
import { admission, makeAccount, makeKey, openTestStore, usage } from "../billing/support.js";
import { createHarness, type CliHarness } from "../cli/harness.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";

const USD = 1_000_000_000n;
const DAY_MS = 86_400_000;
const SECRET = "ledger-secret-for-the-tests-0123456789";

interface Difference {
  table: string;
  id: string;
  account_id: string;
  field: string;
  stored: string;
  recomputed: string;
}

interface VerifyJson {
  ok: boolean;
  accounts: number;
  rows: number;
  broken: { row_id: string | null; account_id: string; where: "row" | "head"; expected: string; found: string | null } | null;
  keyed: { from_row: string; key_id: string; unverified_rows: number; problem: string | null } | null;
  differences: Difference[];
  differences_truncated: boolean;
}

async function verifyCli(cli: CliHarness, args: string[], env: Record<string, string> = {}): Promise<{ code: number; report: VerifyJson; stderr: string }> {
  const result = await cli.run(["admin", "ledger", "verify", ...args, "--json"], { env });
  return { code: result.code, report: JSON.parse(result.stdout) as VerifyJson, stderr: result.stderr };
}

const difference = (table: string, id: string, accountId: string, field: string, stored: bigint, recomputed: bigint): Difference => ({
  table,
  id,
  account_id: accountId,
  field,
  stored: String(stored),
  recomputed: String(recomputed),
});

for (const kind of DATABASE_KINDS) {
  describe(`ledger verify recomputes the stored figures on ${kind}`, () => {
    let cli: CliHarness;
    let store: Store;
    let billing: StoreBilling;

    beforeAll(async () => {
      cli = await createHarness(kind);
      store = await openTestStore(cli.database);
      billing = new StoreBilling(store.handle);
    });
    afterAll(async () => {
      vi.useRealTimers();
      await billing?.stopSweeper();
      await store?.close();
      await cli?.close();
    });

    /** Real traffic: an opening credit, a debit, settled requests (one replayed), a request in flight. */
    async function busyAccount(settlements = 3): Promise<{ accountId: string; keyId: string }> {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      await store.accounts.adjustBalance(accountId, -1000n, "débit");
      await store.accounts.adjustBalance(accountId, 2000n, "top-up");
      for (let i = 0; i < settlements; i++) {
        const hold = await billing.admit(admission(accountId, keyId));
        await billing.settle(hold, usage(100 + i, 50 + i), "mock");
        if (i === 0) expect(await billing.settle(hold, usage(100, 50), "mock")).toMatchObject({ recorded: false });
      }
      await billing.admit(admission(accountId, keyId)); // in flight: held, not settled
      return { accountId, keyId };
    }

    it("an untouched ledger after real traffic verifies clean, a shortfall and requests in flight included", async () => {
      const { accountId } = await busyAccount();
      // A charge above the balance: the balance goes to 0, the rest is the row's shortfall note.
      const poor = await makeAccount(store, { balance: 8_000_000n });
      const poorKey = await makeKey(store, poor);
      await billing.settle(await billing.admit(admission(poor, poorKey)), usage(2_000_000, 1_000_000), "mock");
      const rows = await store.db.selectFrom("ledger").select(["note", "cost_nano"]).where("account_id", "=", poor).where("kind", "=", "usage").execute();
      expect(rows[0]!.note).toMatch(/^shortfall_nano=\d+$/);
      expect((await store.accounts.get(poor))!.balance).toBe(0n);

      for (const account of [accountId, poor]) {
        const { code, report } = await verifyCli(cli, ["--account", account]);
        expect(report).toMatchObject({ ok: true, broken: null, keyed: null, differences: [] });
        expect(code).toBe(0);
      }
      const all = await verifyCli(cli, []);
      expect(all.report).toMatchObject({ ok: true, differences: [] });
      expect(all.code).toBe(0);
      expect(all.stderr).toBe("");
      const text = await cli.run(["admin", "ledger", "verify", "--account", accountId]);
      expect(text.stdout).toBe(`ledger intact: 1 accounts, 6 rows checked; balances, spend and usage match it\n`);
    });

    it("an edited balance and total spent: exit 1 naming the account, the field, stored and recomputed", async () => {
      const { accountId } = await busyAccount();
      const before = (await store.accounts.get(accountId))!;
      await sql`update accounts set balance_nano = balance_nano + 700, total_spent_nano = total_spent_nano + 5 where id = ${accountId}`.execute(store.db);
      const { code, report } = await verifyCli(cli, ["--account", accountId]);
      expect(code).toBe(1);
      expect(report.ok).toBe(false);
      expect(report.broken).toBeNull();
      expect(report.differences).toEqual([
        difference("accounts", accountId, accountId, "balance_nano", before.balance + 700n, before.balance),
        difference("accounts", accountId, accountId, "total_spent_nano", before.totalSpent + 5n, before.totalSpent),
      ]);
      const text = await cli.run(["admin", "ledger", "verify", "--account", accountId]);
      expect(text.code).toBe(1);
      expect(text.stdout).toBe(
        [
          `ledger chain intact: 1 accounts, 6 rows checked`,
          `account ${accountId}: balance_nano is ${before.balance + 700n}, the ledger says ${before.balance}`,
          `account ${accountId}: total_spent_nano is ${before.totalSpent + 5n}, the ledger says ${before.totalSpent}`,
          `2 stored figures differ from the ledger`,
          ``,
        ].join("\n"),
      );
      // The whole ledger: the same account named.
      const all = await verifyCli(cli, []);
      expect(all.code).toBe(1);
      expect(all.report.differences.filter((d) => d.account_id === accountId)).toHaveLength(2);
    });

    it("a key's spend and tokens, and the holds of requests in flight, edited: each named", async () => {
      const { accountId, keyId } = await busyAccount();
      const key = await store.db.selectFrom("keys").selectAll().where("id", "=", keyId).executeTakeFirstOrThrow();
      const account = await store.db.selectFrom("accounts").selectAll().where("id", "=", accountId).executeTakeFirstOrThrow();
      expect(key.held_nano).toBeGreaterThan(0n);
      await sql`update keys set spent_nano = 0, tokens_used = tokens_used - 10, held_tokens = 0 where id = ${keyId}`.execute(store.db);
      await sql`update accounts set held_nano = 0 where id = ${accountId}`.execute(store.db);
      const { code, report } = await verifyCli(cli, ["--account", accountId]);
      expect(code).toBe(1);
      expect(report.differences).toEqual([
        difference("accounts", accountId, accountId, "held_nano", 0n, account.held_nano),
        difference("keys", keyId, accountId, "spent_nano", 0n, key.spent_nano),
        difference("keys", keyId, accountId, "tokens_used", key.tokens_used - 10n, key.tokens_used),
        difference("keys", keyId, accountId, "held_tokens", 0n, key.held_tokens),
      ]);
      expect(key.tokens_used).toBe(150n + 152n + 154n); // input + output of the three settlements
    });

    it("monthly usage and the hourly rollup edited, a row added or removed: each named, for its account only", async () => {
      const { accountId, keyId } = await busyAccount(2);
      const other = await busyAccount(1);
      const month = await store.db.selectFrom("monthly_usage").selectAll().where("account_id", "=", accountId).executeTakeFirstOrThrow();
      await sql`update monthly_usage set requests = requests + 1 where account_id = ${accountId} and month = ${month.month}`.execute(store.db);
      // A month without a ledger row, made up.
      await sql`insert into monthly_usage (account_id, month, cost_nano, tokens, requests) values (${accountId}, '1999-01', 5, 0, 1)`.execute(store.db);
      type Group = { key_id: string; hour: bigint; model: string; provider: string; requests: bigint; cost_nano: bigint };
      const groupsOf = async (account: string) =>
        (await sql<Group>`select key_id, hour, model, provider, requests, cost_nano from usage_hourly where account_id = ${account} order by hour`.execute(store.db)).rows;
      const [group] = await groupsOf(accountId);
      await sql`update usage_hourly set cost_nano = cost_nano - 1
        where key_id = ${group!.key_id} and hour = ${group!.hour} and account_id = ${accountId} and model = ${group!.model} and provider = ${group!.provider}`.execute(store.db);
      // Another account's group deleted: a ledger group without its stored row.
      const [otherGroup] = await groupsOf(other.accountId);
      await sql`delete from usage_hourly where account_id = ${other.accountId} and hour = ${otherGroup!.hour}`.execute(store.db);

      const hourOf = (g: Group) => `${new Date(Number(g.hour) * 3_600_000).toISOString().slice(0, 13)}h`;
      const { code, report } = await verifyCli(cli, ["--account", accountId]);
      expect(code).toBe(1);
      expect(report.differences).toEqual([
        difference("monthly_usage", `${accountId} 1999-01`, accountId, "cost_nano", 5n, 0n),
        difference("monthly_usage", `${accountId} 1999-01`, accountId, "requests", 1n, 0n),
        difference("monthly_usage", `${accountId} ${month.month}`, accountId, "requests", month.requests + 1n, month.requests),
        difference("usage_hourly", `${keyId} ${hourOf(group!)} ${group!.model} ${group!.provider}`, accountId, "cost_nano", group!.cost_nano - 1n, group!.cost_nano),
      ]);
      const theOther = await verifyCli(cli, ["--account", other.accountId]);
      // Every figure of the group, in the table's column order: stored 0, recomputed the ledger's.
      const otherId = `${other.keyId} ${hourOf(otherGroup!)} ${otherGroup!.model} ${otherGroup!.provider}`;
      expect(theOther.report.differences.map((d) => d.field).sort()).toEqual(["cost_nano", "input_cost_nano", "input_tokens", "output_cost_nano", "output_tokens", "requests"]);
      expect(theOther.report.differences).toEqual(
        expect.arrayContaining([
          difference("usage_hourly", otherId, other.accountId, "requests", 0n, otherGroup!.requests),
          difference("usage_hourly", otherId, other.accountId, "cost_nano", 0n, otherGroup!.cost_nano),
        ]),
      );
      expect(theOther.report.differences.every((d) => d.id === otherId && d.stored === "0")).toBe(true);
    });

    it("after a prune the deleted rows' figures are carried, so the balances still add up", async () => {
      vi.useFakeTimers({ toFake: ["Date"] });
      const old = Date.now() - 400 * DAY_MS;
      vi.setSystemTime(old);
      let accountId: string;
      let keyId: string;
      const oldBilling = new StoreBilling(store.handle, { now: () => old });
      try {
        accountId = await makeAccount(store, { balance: USD });
        keyId = await makeKey(store, accountId);
        await store.accounts.adjustBalance(accountId, -3000n, "old debit");
        for (let i = 0; i < 2; i++) await oldBilling.settle(await oldBilling.admit(admission(accountId, keyId)), usage(300, 200), "mock");
      } finally {
        await oldBilling.stopSweeper();
        vi.useRealTimers();
      }
      await billing.settle(await billing.admit(admission(accountId, keyId)), usage(10, 10), "mock");
      await store.accounts.adjustBalance(accountId, 1234n, "new credit");
      expect(await store.ledger.prune(365)).toBeGreaterThanOrEqual(4);
      expect(await store.ledger.count(accountId)).toBe(2);
      const account = await store.db.selectFrom("accounts").selectAll().where("id", "=", accountId).executeTakeFirstOrThrow();
      expect(account.pruned_spent_nano).toBeGreaterThan(0n);
      expect(account.pruned_balance_nano).toBe(USD - 3000n - account.pruned_spent_nano);
      const { code, report } = await verifyCli(cli, ["--account", accountId]);
      expect(report).toMatchObject({ ok: true, broken: null, differences: [] });
      expect(code).toBe(0);
      // The carried figures are checked like the rest: a balance edited after the prune is named.
      await sql`update accounts set balance_nano = balance_nano - 1 where id = ${accountId}`.execute(store.db);
      expect((await verifyCli(cli, ["--account", accountId])).report.differences).toEqual([
        difference("accounts", accountId, accountId, "balance_nano", account.balance_nano - 1n, account.balance_nano),
      ]);
    });

    it("reports each recomputation as it starts; the CLI prints them once a run is long", async () => {
      const { accountId } = await busyAccount(1);
      const steps: string[] = [];
      const result = await store.ledger.recompute({ accountId, onStep: (step, index, of) => steps.push(`${step} ${index}/${of}`) });
      expect(result).toEqual({ differences: [], truncated: false });
      expect(steps).toEqual(LEDGER_RECOMPUTE_STEPS.map((step, i) => `${step} ${i + 1}/4`));

      let now = 0;
      let stderr = "";
      const progress = verifyProgress({ stderr: (text) => (stderr += text) }, () => now, 1000);
      progress.onProgress({ rows: 2000, lastId: 10_000n, atId: 2000n });
      progress.onStep("accounts", 1, 4);
      expect(stderr).toBe(""); // a quick run prints nothing
      now = 1500;
      progress.onProgress({ rows: 4000, lastId: 10_000n, atId: 4000n });
      progress.onStep("keys", 2, 4);
      now = 1600;
      progress.onProgress({ rows: 6000, lastId: 10_000n, atId: 6000n });
      expect(stderr).toBe("ledger verify: 4000 rows checked, at id 4000 of 10000\nledger verify: recomputing key spend, tokens and holds from the ledger (2 of 4)\n");
    });
  });

  if (kind === "postgres")
    it("postgres: a row that commits after the walk passed its id is walked when its successor asks for it", { timeout: 30_000 }, async () => {
      const database = await createTestDatabase(kind);
      const store = await openTestStore(database);
      const late = new pg.Client({ connectionString: database.databaseUrl! });
      await late.connect();
      try {
        const a = await makeAccount(store, { balance: USD });
        const b = await makeAccount(store, { balance: USD });
        // An append to A whose transaction stays open: its id is drawn, its row not visible.
        await late.query("begin");
        const { rows } = await late.query<{ id: string }>(
          `insert into ledger (created_at, account_id, request_id, kind, cost_nano) values (${Date.now()}, '${a}', 'late-row', 'credit', 1) returning id`,
        );
        const lateId = BigInt(rows[0]!.id);
        for (let i = 0; i < 3; i++) await store.accounts.adjustBalance(b, 1n, null);
        let committed = false;
        const result = await store.ledger.verify({
          pageRows: 1,
          onProgress: async ({ atId }) => {
            if (committed || atId <= lateId) return;
            committed = true;
            // The walk is past the late row's id: it commits now, and A's next row chains to it.
            await late.query("commit");
            await store.accounts.adjustBalance(a, 1n, null);
          },
        });
        expect(committed).toBe(true);
        expect(result).toEqual({ accounts: 2, rows: 7, broken: null });
      } finally {
        await late.end();
        await store.close();
        await database.drop();
      }
    });

  describe(`keyed ledger chain on ${kind}`, () => {
    let cli: CliHarness;
    let store: Store;
    let billing: StoreBilling;
    let firstKeyed: bigint;
    let unkeyedAccount: string;
    const withSecret = { GATEWAY_LEDGER_SECRET: SECRET };
    const key = new LedgerChainKey(SECRET);

    beforeAll(async () => {
      cli = await createHarness(kind);
      // Rows written before the secret was configured stay unkeyed and verifiable.
      const before = await openTestStore(cli.database);
      unkeyedAccount = await makeAccount(before, { balance: USD });
      await before.accounts.adjustBalance(unkeyedAccount, -10n, null);
      expect(before.handle.ledgerChain.mode).toEqual({ kind: "unkeyed" });
      await before.close();
      store = await openStore({
        databaseUrl: cli.database.databaseUrl,
        sqlitePath: cli.database.sqlitePath,
        secret: "test-secret-0123456789",
        ledgerSecret: SECRET,
        ledgerWriter: true,
      });
      const mode = store.handle.ledgerChain.mode;
      if (mode.kind !== "keyed") throw new Error(`expected a keyed chain, got ${mode.kind}`);
      firstKeyed = mode.epoch.fromId;
      expect(mode.epoch.keyId).toBe(key.id);
      billing = new StoreBilling(store.handle);
    });
    afterAll(async () => {
      await billing?.stopSweeper();
      await store?.close();
      await cli?.close();
    });

    async function keyedAccount(): Promise<{ accountId: string; keyId: string }> {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      await store.accounts.adjustBalance(accountId, -500n, "debit");
      for (let i = 0; i < 2; i++) await billing.settle(await billing.admit(admission(accountId, keyId)), usage(40, 20 + i), "mock");
      return { accountId, keyId };
    }

    it("seals every row from the epoch on with HMAC-SHA256, in the database as the verifier expects", async () => {
      const { accountId } = await keyedAccount();
      await store.accounts.adjustBalance(unkeyedAccount, 77n, "keyed now");
      for (const account of [unkeyedAccount, accountId]) {
        const rows = await store.db.selectFrom("ledger").selectAll().where("account_id", "=", account).orderBy("id").execute();
        let previous = LEDGER_GENESIS_HASH;
        for (const row of rows) {
          const unkeyed = ledgerRowHash(previous, row);
          expect(row.hash).toBe(row.id >= firstKeyed ? key.seal(unkeyed) : unkeyed);
          previous = row.hash!;
        }
      }
      const unkeyedRows = await store.db.selectFrom("ledger").select("id").where("account_id", "=", unkeyedAccount).orderBy("id").execute();
      expect(unkeyedRows.map((r) => r.id < firstKeyed)).toEqual([true, true, false]);

      const { code, report } = await verifyCli(cli, [], withSecret);
      expect(report).toMatchObject({ ok: true, broken: null, differences: [], keyed: { from_row: String(firstKeyed), key_id: key.id, unverified_rows: 0, problem: null } });
      expect(code).toBe(0);
      const text = await cli.run(["admin", "ledger", "verify", "--account", accountId], { env: withSecret });
      expect(text.stdout).toBe(`ledger intact: 1 accounts, 4 rows checked, keyed from row ${firstKeyed}; balances, spend and usage match it\n`);
    });

    it("without the secret, or with another: exit 1, keyed rows not verified; nothing can be appended", async () => {
      await keyedAccount();
      const without = await verifyCli(cli, []);
      expect(without.code).toBe(1);
      expect(without.report).toMatchObject({ ok: false, broken: null, differences: [], keyed: { key_id: key.id, problem: "no_secret" } });
      expect(without.report.keyed!.unverified_rows).toBeGreaterThan(0);
      const other = await verifyCli(cli, [], { GATEWAY_LEDGER_SECRET: "another-ledger-secret-000000" });
      expect(other.code).toBe(1);
      expect(other.report.keyed).toMatchObject({ problem: "other_secret" });

      const options = { databaseUrl: cli.database.databaseUrl, sqlitePath: cli.database.sqlitePath, secret: "test-secret-0123456789" };
      await expect(openStore({ ...options, ledgerWriter: true })).rejects.toThrow(
        /the ledger chain is keyed from row \d+ \(key id [0-9a-f]{16}\) and GATEWAY_LEDGER_SECRET is not set/,
      );
      await expect(openStore({ ...options, ledgerSecret: "another-ledger-secret-000000", ledgerWriter: true })).rejects.toThrow(/is not the secret it is keyed with/);
      const locked = await openStore(options);
      try {
        expect(locked.handle.ledgerChain.mode).toMatchObject({ kind: "locked", reason: "no_secret" });
        await expect(locked.accounts.adjustBalance(unkeyedAccount, 1n, null)).rejects.toThrow(/ledger chain is keyed/);
      } finally {
        await locked.close();
      }
      // The epoch record is append-only.
      await expect(sql`update ledger_chain_keys set from_id = from_id + 1000`.execute(store.db)).rejects.toThrow(/append-only/);
    });

    it("a row inserted with plain SQL, the balance raised to match, is named: plain SQL cannot know the key", async () => {
      const { accountId } = await keyedAccount();
      const requestId = `forged-${kind}`;
      if (kind === "postgres") {
        const client = new pg.Client({ connectionString: cli.database.databaseUrl! });
        await client.connect();
        try {
          const insert = `insert into ledger (created_at, account_id, request_id, kind, cost_nano) values (${Date.now()}, '${accountId}', '${requestId}', 'credit', 5000)`;
          // A session without the key is refused by the trigger ...
          await expect(client.query(insert)).rejects.toThrow(/ledger_chain_keyed/);
          // ... so the forger sets the trigger aside (the hash is then the unkeyed one, all plain SQL can compute).
          await client.query("alter table ledger disable trigger ledger_chain_key");
          try {
            await client.query(insert);
          } finally {
            await client.query("alter table ledger enable trigger ledger_chain_key");
          }
          await client.query(`update accounts set balance_nano = balance_nano + 5000 where id = '${accountId}'`);
        } finally {
          await client.end();
        }
      } else {
        // A connection of its own (the sqlite3 shell, a script) with the gateway's open-source encoder registered, unkeyed.
        const forger = new SqliteDatabase(cli.database.sqlitePath);
        try {
          forger.defaultSafeIntegers(true);
          forger.pragma("busy_timeout = 5000");
          forger.function(SQLITE_LEDGER_HASH_FUNCTION, { deterministic: true, varargs: true, safeIntegers: true }, (previous, ...values) =>
            ledgerRowHashFromValues(previous, values, LEDGER_CHAIN_COLUMNS),
          );
          forger.prepare("insert into ledger (created_at, account_id, request_id, kind, cost_nano) values (?, ?, ?, 'credit', 5000)").run(BigInt(Date.now()), accountId, requestId);
          forger.prepare("update accounts set balance_nano = balance_nano + 5000 where id = ?").run(accountId);
        } finally {
          forger.close();
        }
      }
      const rows = await store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).orderBy("id").execute();
      const forged = rows[rows.length - 1]!;
      expect(forged.request_id).toBe(requestId);
      const unkeyed = ledgerRowHash(rows[rows.length - 2]!.hash!, forged);
      expect(forged.hash).toBe(unkeyed);

      const { code, report } = await verifyCli(cli, ["--account", accountId], withSecret);
      expect(code).toBe(1);
      expect(report.differences).toEqual([]); // the forger made the balance match ...
      expect(report.broken).toEqual({ row_id: String(forged.id), account_id: accountId, where: "row", expected: key.seal(unkeyed), found: unkeyed }); // ... not the chain
    });
  });
}
