// Group commit. SQLite (src/store/sqlite-writer.ts): operations started in one event-loop turn share
// one transaction; when one of them fails, the batch is rolled back and each operation runs again on its
// own, so the failing one gets its own error with nothing changed and the others commit. PostgreSQL (src/billing/postgres-batcher.ts): one gw_batch call per batch; when an
// operation raises, the batch is rolled back and each operation runs again on its own. On both, a
// batch mixing a refusal, a replay, a failing settlement and successes answers each one as alone.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import SqliteDatabase from "better-sqlite3";
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { StoreBilling } from "../../src/billing/billing-store.js";
import { SqliteWriter, Statement } from "../../src/store/sqlite-writer.js";
import type { Store } from "../../src/store/index.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { admission, counters, DEFAULT_PROJECTION, expectRefusal, makeAccount, makeKey, usage, useBillingStore } from "./support.js";

const USD = 1_000_000_000n;

async function installFailingTrigger(store: Store, accountId: string): Promise<void> {
  if (store.dialect === "sqlite") {
    await sql`create trigger fail_monthly_batch before insert on monthly_usage when new.account_id = ${sql.lit(accountId)}
      begin select raise(abort, 'injected failure'); end`.execute(store.db);
    return;
  }
  await sql`create function fail_monthly_batch() returns trigger language plpgsql as $$
      begin raise exception 'injected failure'; end $$`.execute(store.db);
  await sql`create trigger fail_monthly_batch before insert on monthly_usage
      for each row when (new.account_id = ${sql.lit(accountId)}) execute function fail_monthly_batch()`.execute(store.db);
}

async function dropFailingTrigger(store: Store): Promise<void> {
  if (store.dialect === "sqlite") {
    await sql`drop trigger fail_monthly_batch`.execute(store.db);
    return;
  }
  await sql`drop trigger fail_monthly_batch on monthly_usage`.execute(store.db);
  await sql`drop function fail_monthly_batch()`.execute(store.db);
}

for (const kind of DATABASE_KINDS) {
  describe(`group commit on ${kind}`, () => {
    let store: Store;
    let billing: StoreBilling;
    useBillingStore(kind, (f) => ({ store, billing } = f));

    it("refusals, replays and a failing settlement in one batch do not affect the others", async () => {
      const ok = await makeAccount(store, { balance: USD });
      const okKey = await makeKey(store, ok);
      const poor = await makeAccount(store, { balance: 0n });
      const poorKey = await makeKey(store, poor);
      const failing = await makeAccount(store, { balance: USD });
      const failingKey = await makeKey(store, failing);
      const settled = await billing.admit(admission(ok, okKey));
      await billing.settle(settled, usage(100, 100), "mock");
      const okHold = await billing.admit(admission(ok, okKey));
      const failingHold = await billing.admit(admission(failing, failingKey));
      const failingBefore = await counters(store, failing, failingKey);
      await installFailingTrigger(store, failing);
      try {
        const [refused, replay, charged, failed, admitted] = await Promise.allSettled([
          billing.admit(admission(poor, poorKey)),
          billing.settle(settled, usage(999, 999), "mock"),
          billing.settle(okHold, usage(100, 100), "mock"),
          billing.settle(failingHold, usage(100, 100), "mock"),
          billing.admit(admission(ok, okKey)),
        ]);
        await expectRefusal(refused.status === "rejected" ? Promise.reject(refused.reason) : Promise.resolve(), "quota_exceeded");
        expect(replay).toMatchObject({ status: "fulfilled", value: { cost: 1_250_000n, recorded: false } });
        expect(charged).toMatchObject({ status: "fulfilled", value: { cost: 1_250_000n, recorded: true } });
        expect(failed).toMatchObject({ status: "rejected", reason: { type: "ledger_write_failed", status: 502 } });
        expect(admitted.status).toBe("fulfilled");
        expect(await counters(store, failing, failingKey)).toEqual(failingBefore);
        const state = await counters(store, ok, okKey);
        expect(state.account.total_spent_nano).toBe(2_500_000n);
        expect(state.ledger).toBe(2);
      } finally {
        await dropFailingTrigger(store);
      }
    });

    // On PostgreSQL gw_batch keeps the account and key rows of a batch in variables and writes them
    // once (migration 0003): each operation must still see the ones before it in the batch.
    it("each operation of a batch sees the releases, reservations and charges before it, across accounts", async () => {
      const P = DEFAULT_PROJECTION; // 1000 in + 500 out
      const small = 125_000n; // 10 in + 10 out
      const charge = 1_250_000n; // usage(100, 100)
      const a = await makeAccount(store, { balance: 3n * P });
      const aKey = await makeKey(store, a);
      const b = await makeAccount(store, { balance: USD });
      const bKey = await makeKey(store, b, { budgetCap: charge });
      const c = await makeAccount(store, { balance: USD, monthlyBudget: 2_000_000n });
      const cKey = await makeKey(store, c);
      const aHold = await billing.admit(admission(a, aKey));
      const bHold = await billing.admit(admission(b, bKey, 10, 10));
      const cHold = await billing.admit(admission(c, cKey, 10, 10));

      // One batch (one event-loop turn), the accounts interleaved.
      const results = await Promise.allSettled([
        billing.release(aHold),
        billing.settle(bHold, usage(100, 100), "mock"), // reaches b's key cap: the key is exhausted
        billing.settle(cHold, usage(100, 100), "mock"), // c's month: 1,250,000 of 2,000,000
        ...[1, 2, 3, 4, 5].map(() => billing.admit(admission(a, aKey))), // the release freed room for 3
        billing.admit(admission(b, bKey, 10, 10)),
        billing.admit(admission(c, cKey, 10, 10)), // 1,375,000: within the budget
        billing.admit(admission(c, cKey)), // + 7,500,000: over it
      ]);
      expect(results.slice(0, 3).map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled"]);
      expect(results.slice(3, 8).map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "rejected"]);
      for (const r of results.slice(6, 8)) await expectRefusal(Promise.reject((r as PromiseRejectedResult).reason), "quota_exceeded");
      await expectRefusal(Promise.reject((results[8] as PromiseRejectedResult).reason), "key_budget_exceeded");
      expect(results[9]!.status).toBe("fulfilled");
      await expectRefusal(Promise.reject((results[10] as PromiseRejectedResult).reason), "quota_exceeded");

      const aState = await counters(store, a, aKey);
      expect(aState.account).toMatchObject({ balance_nano: 3n * P, held_nano: 3n * P, held_tokens: 4500n, total_spent_nano: 0n });
      expect(aState.key).toMatchObject({ held_nano: 3n * P, spent_nano: 0n });
      expect(aState.holds).toHaveLength(3);
      const bState = await counters(store, b, bKey);
      expect(bState.account).toMatchObject({ balance_nano: USD - charge, total_spent_nano: charge, held_nano: 0n, held_tokens: 0n });
      expect(bState.key).toMatchObject({ status: "exhausted", spent_nano: charge, tokens_used: 200n, held_nano: 0n });
      const cState = await counters(store, c, cKey);
      expect(cState.account).toMatchObject({ balance_nano: USD - charge, total_spent_nano: charge, held_nano: small, held_tokens: 20n });
      expect(cState.key).toMatchObject({ status: "enabled", spent_nano: charge, tokens_used: 200n, held_nano: small, held_tokens: 20n });
      expect(cState.monthly).toEqual([expect.objectContaining({ cost_nano: charge, tokens: 200n, requests: 1n })]);
      expect(cState.ledger).toBe(1);
    });
  });
}

describe("SQLite group commit", () => {
  let store: Store;
  let billing: StoreBilling;
  useBillingStore("sqlite", (f) => ({ store, billing } = f));

  /** A second connection to the same file holding SQLite's write lock, as another gateway process would. */
  function takeWriteLock(): SqliteDatabase.Database {
    const other = new SqliteDatabase(store.handle.sqlite!.name);
    other.exec("begin immediate");
    return other;
  }

  it("waits for another connection's write lock without stopping the event loop, then commits", async () => {
    const accountId = await makeAccount(store, { balance: USD });
    const keyId = await makeKey(store, accountId);
    const before = await counters(store, accountId, keyId);
    const other = takeWriteLock();
    let admitted = false;
    const hold = billing.admit(admission(accountId, keyId)).finally(() => (admitted = true));
    try {
      // SQLite's own busy handler would sleep on this thread, and this connection's lock could never
      // be released: timers, reads and everything else of the process go on instead.
      const waitStarted = performance.now();
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Stopped, the loop would only run this timer after the 5 s busy timeout.
      expect(performance.now() - waitStarted).toBeLessThan(2_500);
      expect(await store.accounts.get(accountId)).toMatchObject({ id: accountId });
      expect(admitted).toBe(false);
      expect(await counters(store, accountId, keyId)).toEqual(before);
    } finally {
      other.exec("commit");
      other.close();
    }
    expect(await hold).toMatchObject({ accountId, keyId, amount: DEFAULT_PROJECTION });
    expect((await counters(store, accountId, keyId)).account.held_nano).toBe(before.account.held_nano + DEFAULT_PROJECTION);
  });

  it("gives up after the busy timeout with SQLITE_BUSY, having run nothing", async () => {
    const writer = new SqliteWriter(store.db, store.handle.sqlite!, { busyTimeoutMs: 50 });
    const other = takeWriteLock();
    let ran = false;
    try {
      const started = performance.now();
      await expect(writer.run(() => (ran = true))).rejects.toMatchObject({ code: "SQLITE_BUSY" });
      expect(performance.now() - started).toBeGreaterThanOrEqual(50);
      expect(ran).toBe(false);
    } finally {
      other.exec("rollback");
      other.close();
    }
    // The writer works again once the lock is free.
    await expect(writer.run(() => "ok")).resolves.toBe("ok");
  });

  it("after a batch, the connection's other queries still wait for another connection's write lock", async () => {
    const accountId = await makeAccount(store, { balance: USD });
    const keyId = await makeKey(store, accountId);
    await billing.admit(admission(accountId, keyId)); // a batch: it begins without waiting
    // Another thread holds the write lock for half a second. A Kysely write waits for it in SQLite's
    // busy handler (this thread sleeps, so the lock must be released elsewhere); without waiting it
    // would fail at once with SQLITE_BUSY. The elapsed time shows the lock was still held when it ran.
    const holdMs = 500;
    const locked = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(
      `const { workerData } = require("node:worker_threads");
       const Database = require(workerData.driver);
       const db = new Database(workerData.path);
       db.exec("begin immediate");
       Atomics.store(workerData.locked, 0, 1);
       Atomics.notify(workerData.locked, 0);
       Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, workerData.holdMs);
       db.exec("commit");
       db.close();`,
      { eval: true, workerData: { driver: createRequire(import.meta.url).resolve("better-sqlite3"), path: store.handle.sqlite!.name, locked, holdMs } },
    );
    try {
      while (Atomics.load(locked, 0) === 0) await new Promise((resolve) => setTimeout(resolve, 5));
      const started = performance.now();
      await store.db.updateTable("accounts").set({ tier: "waited" }).where("id", "=", accountId).execute();
      expect(performance.now() - started).toBeGreaterThan(holdMs / 5);
      expect((await store.accounts.get(accountId))!.tier).toBe("waited");
    } finally {
      await worker.terminate();
    }
    // And the next batch still begins without waiting (covered above); it works as before.
    await expect(billing.admit(admission(accountId, keyId))).resolves.toMatchObject({ accountId });
  });

  it("a batch waits for a Kysely transaction open on the same connection and runs after its COMMIT", async () => {
    const writer = new SqliteWriter(store.db, store.handle.sqlite!);
    const accountId = await makeAccount(store, { balance: USD });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let transactionStarted!: () => void;
    const started = new Promise<void>((resolve) => (transactionStarted = resolve));
    const transaction = store.db.transaction().execute(async (trx) => {
      await trx.updateTable("accounts").set({ tier: "in-transaction" }).where("id", "=", accountId).execute();
      transactionStarted();
      await released; // the transaction spans awaits, as the stores' transactions do
      await trx.updateTable("accounts").set({ tier: "committed" }).where("id", "=", accountId).execute();
    });
    await started;
    let seen: string | undefined;
    const op = writer.run((exec) => (seen = new Statement<{ tier: string }>("select tier from accounts where id = ?").rows(exec, [accountId])[0]?.tier));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Run now, the batch's BEGIN would fail inside the open transaction, or its writes would join it.
    expect(seen).toBeUndefined();
    release();
    await transaction;
    await expect(op).resolves.toBe("committed");
  });

  it("runs the operations of one turn together; a failing one is rolled back alone", async () => {
    const writer = new SqliteWriter(store.db, store.handle.sqlite!);
    const accountId = await makeAccount(store, { balance: USD });
    const touch = new Statement<never>("update accounts set tier = ? where id = ?");
    const results = await Promise.allSettled([
      writer.run((exec) => {
        touch.changes(exec, ["a", accountId]);
        return 1;
      }),
      writer.run((exec) => {
        touch.changes(exec, ["b", accountId]);
        throw new Error("op 2 fails");
      }),
      writer.run((exec) => {
        const rows = new Statement<{ tier: string }>("select tier from accounts where id = ?").rows(exec, [accountId]);
        return rows[0]?.tier; // sees op 1's write, not op 2's
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(results[2]).toMatchObject({ value: "a" });
    expect(results[1]).toMatchObject({ reason: { message: "op 2 fails" } });
    expect((await store.accounts.get(accountId))!.tier).toBe("a");
  });

  it("an error that ends the whole transaction: the batch is rolled back and each operation runs again alone", async () => {
    const a = await makeAccount(store, { balance: USD });
    const aKey = await makeKey(store, a);
    const b = await makeAccount(store, { balance: USD });
    const bKey = await makeKey(store, b);
    const aHold = await billing.admit(admission(a, aKey));
    const bHold = await billing.admit(admission(b, bKey));
    const bBefore = await counters(store, b, bKey);
    // RAISE(ROLLBACK) ends the transaction itself, not only the statement: a's work in it is gone too.
    await sql`create trigger fail_monthly_rollback before insert on monthly_usage when new.account_id = ${sql.lit(b)}
      begin select raise(rollback, 'injected rollback'); end`.execute(store.db);
    try {
      const [charged, failed] = await Promise.allSettled([billing.settle(aHold, usage(100, 100), "mock"), billing.settle(bHold, usage(100, 100), "mock")]);
      expect(charged).toMatchObject({ status: "fulfilled", value: { cost: 1_250_000n, recorded: true } });
      expect(failed).toMatchObject({ status: "rejected", reason: { type: "ledger_write_failed", status: 502 } });
      expect(await counters(store, b, bKey)).toEqual(bBefore);
      const aAfter = await counters(store, a, aKey);
      expect(aAfter.account).toMatchObject({ balance_nano: USD - 1_250_000n, total_spent_nano: 1_250_000n, held_nano: 0n });
      expect(aAfter.ledger).toBe(1);
    } finally {
      await sql`drop trigger fail_monthly_rollback`.execute(store.db);
    }
    expect(await billing.settle(aHold, usage(100, 100), "mock")).toEqual({ cost: 1_250_000n, recorded: false });
    expect(await billing.settle(bHold, usage(100, 100), "mock")).toEqual({ cost: 1_250_000n, recorded: true });
  });
});
