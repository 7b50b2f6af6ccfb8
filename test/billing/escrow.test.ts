// Balance escrow on PostgreSQL (ADR 0048, src/billing/escrow-postgres.ts): two stores (two pools and
// batchers, as two gateway processes have) admitting for one account from slices of its balance.
// PostgreSQL only: SQLite has one writer and no escrow.
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { sql } from "kysely";
import { StoreBilling } from "../../src/billing/billing-store.js";
import type { Hold } from "../../src/billing/types.js";
import type { Store } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { admission, DEFAULT_PROJECTION, makeAccount, makeKey, openTestStore, usage } from "./support.js";

/** What settling one hold with usage(1000, 100) costs: 1000 × 2500 + 100 × 10000 nano-USD. */
const COST = 3_500_000n;
const ESCROW = { tickMs: 20, idleMs: 60_000, leaseMs: 30_000 };

async function accountRow(store: Store, accountId: string) {
  return store.db.selectFrom("accounts").select(["balance_nano", "held_nano"]).where("id", "=", accountId).executeTakeFirstOrThrow();
}

async function escrowRows(store: Store, accountId: string) {
  return store.db.selectFrom("account_escrows").selectAll().where("account_id", "=", accountId).execute();
}

async function holdsSum(store: Store, accountId: string): Promise<bigint> {
  const rows = await store.db.selectFrom("holds").select("amount_nano").where("account_id", "=", accountId).execute();
  return rows.reduce((sum, row) => sum + row.amount_nano, 0n);
}

async function ledgerSum(store: Store, accountId: string): Promise<bigint> {
  const rows = await store.db.selectFrom("ledger").select("cost_nano").where("account_id", "=", accountId).where("kind", "=", "usage").execute();
  return rows.reduce((sum, row) => sum + row.cost_nano, 0n);
}

async function until(condition: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

for (const kind of DATABASE_KINDS) {
  if (kind !== "postgres") continue;
  describe("balance escrow on PostgreSQL", () => {
    let database: TestDatabase;
    const stores: Store[] = [];
    const billings: StoreBilling[] = [];
    let a: StoreBilling;
    let b: StoreBilling;
    let store: Store;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      for (let i = 0; i < 2; i++) stores.push(await openTestStore(database));
      store = stores[0]!;
      a = new StoreBilling(stores[0]!.handle, { escrow: ESCROW });
      b = new StoreBilling(stores[1]!.handle, { escrow: ESCROW });
    });
    afterEach(async () => {
      for (const billing of billings.splice(0)) await billing.close();
    });
    afterAll(async () => {
      await a.close();
      await b.close();
      for (const s of stores) await s.close();
      await database.drop();
    });

    /** Two settled pairs per store: the database called the account and key plain, and each store holds a slice. */
    async function warmUp(accountId: string, keyId: string): Promise<void> {
      for (const billing of [a, b]) {
        await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 100), "mock");
        await until(async () => (await escrowRows(store, accountId)).length === (billing === a ? 1 : 2));
        await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 100), "mock");
      }
    }

    it("200 parallel admissions over two stores against a balance for 30: exactly 30, never overdrawn, ledger = balance change", async () => {
      // After the warm-up's four settlements, exactly what 30 holds need, and less than one more.
      const accountId = await makeAccount(store, { balance: 4n * COST + 30n * DEFAULT_PROJECTION + DEFAULT_PROJECTION / 2n });
      const keyId = await makeKey(store, accountId);
      await warmUp(accountId, keyId);
      expect((await escrowRows(store, accountId)).map((row) => row.amount_nano > 0n)).toEqual([true, true]);
      const before = await accountRow(store, accountId);
      const ledgerBefore = await ledgerSum(store, accountId);

      const outcomes = await Promise.allSettled(Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).admit(admission(accountId, keyId))));
      const admitted = outcomes.flatMap((o, i) => (o.status === "fulfilled" ? [{ hold: o.value, billing: i % 2 === 0 ? a : b }] : []));
      const refusals = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason as { type?: string; details?: { code?: string } }] : []));
      expect(admitted).toHaveLength(30);
      expect(refusals.every((r) => r.type === "quota_exceeded" && r.details?.code === "insufficient_balance")).toBe(true);
      // Some came from slices: a slice hold has no holds row.
      expect(await holdsSum(store, accountId)).toBeLessThan(30n * DEFAULT_PROJECTION);
      const during = await accountRow(store, accountId);
      expect(during.balance_nano - during.held_nano).toBeGreaterThanOrEqual(0n);

      await Promise.all(admitted.map(({ hold, billing }) => billing.settle(hold, usage(1000, 100), "mock")));
      const after = await accountRow(store, accountId);
      expect(after.balance_nano).toBeGreaterThanOrEqual(0n);
      expect(before.balance_nano - after.balance_nano).toBe((await ledgerSum(store, accountId)) - ledgerBefore);
      expect(before.balance_nano - after.balance_nano).toBe(30n * COST);
      // held = the holds left (none) + the slices out.
      const slices = (await escrowRows(store, accountId)).reduce((sum, row) => sum + row.amount_nano, 0n);
      expect(after.held_nano).toBe((await holdsSum(store, accountId)) + slices);
    });

    it("gives every slice back on close, and a released slice hold goes back to its slice", async () => {
      const own = [new StoreBilling(stores[0]!.handle, { escrow: ESCROW }), new StoreBilling(stores[1]!.handle, { escrow: ESCROW })];
      const accountId = await makeAccount(store, { balance: 10_000_000_000n });
      const keyId = await makeKey(store, accountId);
      for (const billing of own) {
        await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 100), "mock");
        await until(async () => (await escrowRows(store, accountId)).length === own.indexOf(billing) + 1);
      }
      const local: Hold = await own[0]!.admit(admission(accountId, keyId));
      expect(await holdsSum(store, accountId)).toBe(0n);
      await own[0]!.release(local);
      const { balance_nano: balance } = await accountRow(store, accountId);
      for (const billing of own) await billing.close();
      expect(await escrowRows(store, accountId)).toEqual([]);
      expect(await accountRow(store, accountId)).toEqual({ balance_nano: balance, held_nano: 0n });
      // Closed: every admission is central again.
      const central = await own[0]!.admit(admission(accountId, keyId));
      expect(await holdsSum(store, accountId)).toBe(DEFAULT_PROJECTION);
      await own[0]!.release(central);
    });

    it("a give-back that follows a settlement in the same batch strands nothing in the slice", async () => {
      const own = new StoreBilling(stores[0]!.handle, { escrow: ESCROW });
      const accountId = await makeAccount(store, { balance: 10_000_000_000n });
      const keyId = await makeKey(store, accountId);
      await own.settle(await own.admit(admission(accountId, keyId)), usage(1000, 100), "mock");
      await until(async () => (await escrowRows(store, accountId)).length === 1);
      const first = await own.admit(admission(accountId, keyId));
      const second = await own.admit(admission(accountId, keyId));
      expect(await holdsSum(store, accountId)).toBe(0n); // both from the slice
      // The settlement and the give-back at shutdown go in one batch, the settlement first: the
      // give-back must not keep the settled hold's share (it did: "down to the two in flight").
      const settling = own.settle(first, usage(1000, 100), "mock");
      await own.close();
      await settling;
      await own.settle(second, usage(1000, 100), "mock");
      const slices = (await escrowRows(store, accountId)).reduce((sum, row) => sum + row.amount_nano, 0n);
      expect(slices).toBe(0n);
      expect(await accountRow(store, accountId)).toEqual({ balance_nano: 10_000_000_000n - 3n * COST, held_nano: 0n });
    });

    it("a holder that stops (its process died) has its slice given back by the sweeper once the lease ran out", async () => {
      const dying = await openTestStore(database);
      const holder = new StoreBilling(dying.handle, { escrow: { ...ESCROW, leaseMs: 1_000 } });
      const accountId = await makeAccount(store, { balance: 10_000_000_000n });
      const keyId = await makeKey(store, accountId);
      await holder.settle(await holder.admit(admission(accountId, keyId)), usage(1000, 100), "mock");
      await until(async () => (await escrowRows(store, accountId)).length === 1);
      await holder.admit(admission(accountId, keyId)); // in flight when it dies: never settled
      const [slice] = await escrowRows(store, accountId);
      // Its pool ends without giving anything back, as a SIGKILL would leave it.
      await dying.close();
      const sweeper = new StoreBilling(store.handle);
      await sweeper.releaseExpiredHolds(Date.now());
      expect(await escrowRows(store, accountId)).toHaveLength(1); // the lease still runs
      await sweeper.releaseExpiredHolds(Number(slice!.expires_at) + 1);
      expect(await escrowRows(store, accountId)).toEqual([]);
      const row = await accountRow(store, accountId);
      expect(row.held_nano).toBe(0n);
      expect(row.balance_nano).toBe(10_000_000_000n - COST);
      await holder.close(); // its timer, still running on the closed pool, stops
    });

    it("a failure in the transaction that moves a slice changes nothing", async () => {
      const accountId = await makeAccount(store, { balance: 10_000_000_000n });
      const keyId = await makeKey(store, accountId);
      const own = new StoreBilling(stores[1]!.handle, { escrow: ESCROW });
      billings.push(own);
      await sql.raw(`create or replace function escrow_fails() returns trigger language plpgsql as $$ begin raise exception 'injected'; end $$`).execute(store.db);
      await sql.raw(`create trigger escrow_fails before insert or update on account_escrows for each row execute function escrow_fails()`).execute(store.db);
      try {
        const hold = await own.admit(admission(accountId, keyId)); // central; its answer asks for a refill, which fails
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await escrowRows(store, accountId)).toEqual([]);
        expect(await accountRow(store, accountId)).toEqual({ balance_nano: 10_000_000_000n, held_nano: DEFAULT_PROJECTION });
        await own.settle(hold, usage(1000, 100), "mock");
        expect(await accountRow(store, accountId)).toEqual({ balance_nano: 10_000_000_000n - COST, held_nano: 0n });
      } finally {
        await sql.raw(`drop trigger escrow_fails on account_escrows`).execute(store.db);
      }
      // A slice now, then a settlement from it whose debit of the slice fails: nothing of it is written.
      await own.settle(await own.admit(admission(accountId, keyId)), usage(1000, 100), "mock");
      await until(async () => (await escrowRows(store, accountId)).length === 1);
      const local = await own.admit(admission(accountId, keyId));
      expect(await holdsSum(store, accountId)).toBe(0n);
      const before = await accountRow(store, accountId);
      const ledgerBefore = await ledgerSum(store, accountId);
      await sql.raw(`create trigger escrow_fails before update on account_escrows for each row execute function escrow_fails()`).execute(store.db);
      try {
        await expect(own.settle(local, usage(1000, 100), "mock")).rejects.toMatchObject({ type: "ledger_write_failed" });
      } finally {
        await sql.raw(`drop trigger escrow_fails on account_escrows`).execute(store.db);
      }
      expect(await accountRow(store, accountId)).toEqual(before);
      expect(await ledgerSum(store, accountId)).toBe(ledgerBefore);
    });

    it("keeps keys with caps and accounts with a monthly budget on the central path", async () => {
      const own = new StoreBilling(stores[0]!.handle, { escrow: ESCROW });
      billings.push(own);
      const capped = await makeAccount(store, { balance: 10_000_000_000n });
      const cappedKey = await makeKey(store, capped, { budgetCap: 1_000_000_000n });
      const budgeted = await makeAccount(store, { balance: 10_000_000_000n, monthlyBudget: 5_000_000_000n });
      const budgetedKey = await makeKey(store, budgeted);
      for (const [accountId, keyId] of [
        [capped, cappedKey],
        [budgeted, budgetedKey],
      ] as const) {
        for (let i = 0; i < 3; i++) await own.settle(await own.admit(admission(accountId, keyId)), usage(1000, 100), "mock");
        const hold = await own.admit(admission(accountId, keyId));
        expect(await holdsSum(store, accountId)).toBe(DEFAULT_PROJECTION);
        expect(await escrowRows(store, accountId)).toEqual([]);
        await own.release(hold);
      }
    });
  });
}
