// The storage contract: the same assertions on SQLite and on PostgreSQL. Guards are checked with raw
// SQL so that the database itself, not our code, is shown to refuse bad writes.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayError } from "../../src/errors/catalogue.js";
import { MAX_BALANCE, MAX_TOTAL_SPENT } from "../../src/core/money.js";
import { OPENING_BALANCE_NOTE } from "../../src/store/accounts-store.js";
import { openStore, type Store } from "../../src/store/index.js";
import { migrate } from "../../src/store/migrate.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";

const DAY = 86_400_000n;

for (const kind of DATABASE_KINDS) {
  describe(`storage contract on ${kind}`, () => {
    let database: TestDatabase;
    let store: Store;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: "test-secret-0123456789" });
    });
    afterAll(async () => {
      await store?.close();
      await database?.drop();
    });

    async function insertLedgerRow(accountId: string, createdAt: bigint, requestId: string) {
      await sql`insert into ledger (created_at, account_id, request_id, kind, cost_nano) values (${createdAt}, ${accountId}, ${requestId}, 'usage', 5)`.execute(store.db);
    }

    it("migrations are idempotent", async () => {
      expect((await migrate(store.handle)).applied).toEqual([]);
    });

    it("CHECK constraints reject an out-of-range balance, in raw SQL", async () => {
      const account = await store.accounts.create({ email: `check-${kind}@example.com`, tier: "default" });
      await expect(sql`update accounts set balance_nano = -1 where id = ${account.id}`.execute(store.db)).rejects.toThrow();
      await expect(sql`update accounts set balance_nano = ${MAX_BALANCE + 1n} where id = ${account.id}`.execute(store.db)).rejects.toThrow();
      await sql`update accounts set balance_nano = ${MAX_BALANCE} where id = ${account.id}`.execute(store.db);
      await expect(sql`update accounts set total_spent_nano = ${MAX_TOTAL_SPENT + 1n} where id = ${account.id}`.execute(store.db)).rejects.toThrow();
      await expect(sql`update accounts set status = 'frozen' where id = ${account.id}`.execute(store.db)).rejects.toThrow();
      await expect(sql`update accounts set held_nano = -5 where id = ${account.id}`.execute(store.db)).rejects.toThrow();
      expect((await store.accounts.get(account.id))!.balance).toBe(MAX_BALANCE);
    });

    it("total_spent never decreases, in raw SQL", async () => {
      const account = await store.accounts.create({ email: `spent-${kind}@example.com`, tier: "default" });
      await sql`update accounts set total_spent_nano = 100 where id = ${account.id}`.execute(store.db);
      await expect(sql`update accounts set total_spent_nano = 99 where id = ${account.id}`.execute(store.db)).rejects.toThrow(/never decreases/);
      expect((await store.accounts.get(account.id))!.totalSpent).toBe(100n);
    });

    it("key counters and statuses are checked", async () => {
      const account = await store.accounts.create({ email: `keys-${kind}@example.com`, tier: "default" });
      const { key } = await store.keys.create({ accountId: account.id });
      await expect(sql`update keys set spent_nano = -1 where id = ${key.id}`.execute(store.db)).rejects.toThrow();
      await expect(sql`update keys set tokens_used = -1 where id = ${key.id}`.execute(store.db)).rejects.toThrow();
      await expect(sql`update keys set status = 'paused' where id = ${key.id}`.execute(store.db)).rejects.toThrow();
    });

    it("the database refuses any UPDATE of a ledger row and a DELETE of a row under 365 days old", async () => {
      const account = await store.accounts.create({ email: `ledger-${kind}@example.com`, tier: "default" });
      const now = BigInt(Date.now());
      await insertLedgerRow(account.id, now, `req-young-${kind}`);
      await insertLedgerRow(account.id, now - 364n * DAY, `req-364-${kind}`);
      await insertLedgerRow(account.id, now - 366n * DAY, `req-old-${kind}`);
      await expect(sql`update ledger set cost_nano = 0 where request_id = ${`req-young-${kind}`}`.execute(store.db)).rejects.toThrow(/append-only/);
      await expect(sql`update ledger set cost_nano = 0 where request_id = ${`req-old-${kind}`}`.execute(store.db)).rejects.toThrow(/append-only/);
      await expect(sql`delete from ledger where request_id = ${`req-young-${kind}`}`.execute(store.db)).rejects.toThrow(/ledger_retention_violation/);
      await expect(sql`delete from ledger where request_id = ${`req-364-${kind}`}`.execute(store.db)).rejects.toThrow(/ledger_retention_violation/);
      await sql`delete from ledger where request_id = ${`req-old-${kind}`}`.execute(store.db);
      const remaining = await store.db.selectFrom("ledger").select("request_id").where("account_id", "=", account.id).execute();
      expect(remaining.map((r) => r.request_id).sort()).toEqual([`req-364-${kind}`, `req-young-${kind}`].sort());
    });

    it("the database refuses replacing a ledger row (SQLite INSERT OR REPLACE) and emptying the ledger (PostgreSQL TRUNCATE)", async () => {
      const account = await store.accounts.create({ email: `replace-${kind}@example.com`, tier: "default" });
      const requestId = `req-replace-${kind}`;
      await insertLedgerRow(account.id, BigInt(Date.now()), requestId);
      const original = await store.db.selectFrom("ledger").selectAll().where("request_id", "=", requestId).executeTakeFirstOrThrow();
      if (kind === "sqlite") {
        await expect(
          sql`insert or replace into ledger (created_at, account_id, request_id, kind, cost_nano) values (${original.created_at}, ${account.id}, ${requestId}, 'usage', 0)`.execute(
            store.db,
          ),
        ).rejects.toThrow(/append-only/);
        await expect(
          sql`replace into ledger (id, created_at, account_id, request_id, kind, cost_nano) values (${original.id}, ${original.created_at}, ${account.id}, ${`${requestId}-other`}, 'usage', 0)`.execute(
            store.db,
          ),
        ).rejects.toThrow(/append-only/);
      } else {
        await expect(sql`truncate ledger`.execute(store.db)).rejects.toThrow(/append-only/);
        await expect(sql`truncate table ledger restart identity cascade`.execute(store.db)).rejects.toThrow(/append-only/);
      }
      await expect(
        sql`insert into ledger (created_at, account_id, request_id, kind, cost_nano) values (${original.created_at}, ${account.id}, ${requestId}, 'usage', 0)
          on conflict (request_id) do update set cost_nano = 0`.execute(store.db),
      ).rejects.toThrow(/append-only/);
      const rows = await store.db.selectFrom("ledger").selectAll().where("account_id", "=", account.id).execute();
      expect(rows).toEqual([original]);
      expect(await store.ledger.count()).toBeGreaterThan(0);
    });

    it("prune refuses anything younger than 365 days and deletes older rows", async () => {
      await expect(store.ledger.prune(364)).rejects.toMatchObject({ type: "ledger_retention_violation" });
      const account = await store.accounts.create({ email: `prune-${kind}@example.com`, tier: "default" });
      await insertLedgerRow(account.id, BigInt(Date.now()) - 400n * DAY, `req-prune-${kind}`);
      expect(await store.ledger.prune(365)).toBeGreaterThanOrEqual(1);
      expect(await store.ledger.count(account.id)).toBe(0);
    });

    it("unique constraints hold", async () => {
      await store.accounts.create({ email: `unique-${kind}@example.com`, tier: "default" });
      await expect(store.accounts.create({ email: `UNIQUE-${kind}@example.com`, tier: "default" })).rejects.toMatchObject({ type: "invalid_request" });
      const account = await store.accounts.create({ email: `unique2-${kind}@example.com`, tier: "default" });
      const { key } = await store.keys.create({ accountId: account.id });
      await expect(
        sql`insert into keys (id, account_id, prefix, hash, status, created_at, updated_at) values ('key_dup', ${account.id}, 'x', ${key.hash}, 'enabled', 0, 0)`.execute(store.db),
      ).rejects.toThrow();
      await insertLedgerRow(account.id, BigInt(Date.now()), `req-unique-${kind}`);
      await expect(insertLedgerRow(account.id, BigInt(Date.now()), `req-unique-${kind}`)).rejects.toThrow();
    });

    it("a transaction that fails midway leaves no partial change", async () => {
      const account = await store.accounts.create({ email: `tx-${kind}@example.com`, tier: "default", balance: 10n });
      await expect(
        store.db.transaction().execute(async (trx) => {
          await trx.updateTable("accounts").set({ balance_nano: 7n }).where("id", "=", account.id).execute();
          await sql`insert into ledger (created_at, account_id, request_id, kind, cost_nano) values (${BigInt(Date.now())}, ${account.id}, ${`req-tx-${kind}`}, 'usage', 3)`.execute(
            trx,
          );
          // Fails on the CHECK constraint after two successful writes.
          await trx.updateTable("accounts").set({ total_spent_nano: -3n }).where("id", "=", account.id).execute();
        }),
      ).rejects.toThrow();
      expect((await store.accounts.get(account.id))!.balance).toBe(10n);
      expect(await store.ledger.count(account.id)).toBe(1); // the opening balance's credit only
    });

    it("administrator credits and debits keep the balance invariant and write a ledger row", async () => {
      const account = await store.accounts.create({ email: `credit-${kind}@example.com`, tier: "default", balance: 5_000_000_000n });
      const credited = await store.accounts.adjustBalance(account.id, 2_500_000_000n, "top-up");
      expect(credited.balance).toBe(7_500_000_000n);
      await expect(store.accounts.adjustBalance(account.id, -8_000_000_000n)).rejects.toBeInstanceOf(GatewayError);
      await expect(store.accounts.adjustBalance(account.id, MAX_BALANCE)).rejects.toMatchObject({ type: "balance_invariant" });
      expect((await store.accounts.get(account.id))!.balance).toBe(7_500_000_000n);
      expect(await store.ledger.count(account.id)).toBe(2); // the opening balance and the top-up
      await expect(store.accounts.adjustBalance("acct_missing", 1n)).rejects.toMatchObject({ type: "account_not_found" });
    });

    /** Credits minus debits minus usage charged to the balance (a shortfall was never collected). */
    async function ledgerBalance(accountId: string): Promise<bigint> {
      const rows = await store.db.selectFrom("ledger").select(["kind", "cost_nano", "note"]).where("account_id", "=", accountId).execute();
      let sum = 0n;
      for (const row of rows) {
        const cost = BigInt(row.cost_nano);
        const shortfall = BigInt(/shortfall_nano=(\d+)/.exec(row.note ?? "")?.[1] ?? 0);
        sum += row.kind === "credit" ? cost : -(cost - shortfall);
      }
      return sum;
    }

    it("a starting balance is a credit row written with the account: the ledger explains every balance", async () => {
      const account = await store.accounts.create({ email: `opening-${kind}@example.com`, tier: "default", balance: 5_000_000_000n });
      const rows = await store.db.selectFrom("ledger").selectAll().where("account_id", "=", account.id).execute();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ kind: "credit", note: OPENING_BALANCE_NOTE, key_id: null });
      expect(BigInt(rows[0]!.cost_nano)).toBe(5_000_000_000n);
      expect(await ledgerBalance(account.id)).toBe(account.balance);
      await store.accounts.adjustBalance(account.id, 1_250_000_000n, "top-up");
      await store.accounts.adjustBalance(account.id, -3_000_000_000n, "refund");
      expect(await ledgerBalance(account.id)).toBe((await store.accounts.get(account.id))!.balance);

      // No balance, no row: 0 is what an empty ledger explains.
      const empty = await store.accounts.create({ email: `opening-zero-${kind}@example.com`, tier: "default" });
      expect(await store.ledger.count(empty.id)).toBe(0);
    });

    it("an account whose opening credit cannot be written is not created", async () => {
      // The ledger insert fails (a trigger standing in for a full disk or a lost connection).
      if (kind === "sqlite") {
        await sql`create trigger test_fail_opening before insert on ledger when new.note = ${sql.lit(OPENING_BALANCE_NOTE)}
          begin select raise(abort, 'injected ledger failure'); end`.execute(store.db);
      } else {
        await sql`create function test_fail_opening() returns trigger language plpgsql as $$
          begin raise exception 'injected ledger failure'; end $$`.execute(store.db);
        await sql`create trigger test_fail_opening before insert on ledger for each row
          when (new.note = ${sql.lit(OPENING_BALANCE_NOTE)}) execute function test_fail_opening()`.execute(store.db);
      }
      try {
        const accountsBefore = await store.accounts.count();
        const email = `opening-fail-${kind}@example.com`;
        await expect(store.accounts.create({ email, tier: "default", balance: 7n })).rejects.toThrow(/injected ledger failure/);
        expect(await store.accounts.getByEmail(email)).toBeNull();
        expect(await store.accounts.count()).toBe(accountsBefore);
      } finally {
        await sql`drop trigger test_fail_opening${sql.raw(kind === "postgres" ? " on ledger" : "")}`.execute(store.db);
        if (kind === "postgres") await sql`drop function test_fail_opening()`.execute(store.db);
      }
    });

    it("keys: only a hash is stored, at most 50 enabled per account, revoke is recorded for other processes", async () => {
      const account = await store.accounts.create({ email: `limit-${kind}@example.com`, tier: "default" });
      const created = await Promise.all(Array.from({ length: 50 }, (_, i) => store.keys.create({ accountId: account.id, name: `k${i}` })));
      const stored = await store.db.selectFrom("keys").selectAll().where("id", "=", created[0]!.key.id).executeTakeFirstOrThrow();
      expect(JSON.stringify(stored, (_k, v) => (typeof v === "bigint" ? v.toString() : v))).not.toContain(created[0]!.raw);
      await expect(store.keys.create({ accountId: account.id })).rejects.toMatchObject({ type: "sub_key_limit_reached" });
      const before = await store.db
        .selectFrom("auth_events")
        .select((eb) => eb.fn.countAll<bigint>().as("n"))
        .executeTakeFirstOrThrow();
      await store.keys.revoke(created[0]!.key.id);
      const after = await store.db
        .selectFrom("auth_events")
        .select((eb) => eb.fn.countAll<bigint>().as("n"))
        .executeTakeFirstOrThrow();
      expect(Number(after.n)).toBe(Number(before.n) + 1);
      await store.keys.create({ accountId: account.id });
      expect((await store.keys.listByAccount(account.id)).filter((k) => k.status === "enabled")).toHaveLength(50);
      await expect(store.keys.create({ accountId: "acct_missing" })).rejects.toMatchObject({ type: "account_not_found" });
    });

    it("upstream keys are encrypted at rest", async () => {
      const account = await store.accounts.create({ email: `upstream-${kind}@example.com`, tier: "default" });
      const secret = "sk-canary-upstream-0123456789abcdef";
      const info = await store.upstreamKeys.add({ accountId: account.id, provider: "openai", key: secret });
      expect(info.last4).toBe("cdef");
      const rows = await sql<{ ciphertext: string }>`select * from upstream_keys`.execute(store.db);
      expect(JSON.stringify(rows.rows, (_k, v) => (typeof v === "bigint" ? v.toString() : v))).not.toContain(secret);
      expect((await store.upstreamKeys.secretsByProvider(account.id)).get("openai")).toEqual([secret]);
      await expect(store.upstreamKeys.add({ accountId: account.id, provider: "openai", key: secret })).rejects.toMatchObject({ type: "conflict" });
    });
  });
}
