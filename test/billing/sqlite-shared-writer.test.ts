// The billing writes of SQLite committed by another process (ADR 0047), in one process: a worker's
// StoreBilling sends its admissions, settlements and releases through RemoteSqliteBillingWrites, the
// "primary" runs them with a BillingWriteAnswerer on its own connection's group-commit writer. The
// channel copies each message with structuredClone, as node:cluster's "advanced" serialization does,
// and delivers it a turn later. Two workers share one owner: their operations join one batch. A
// worker's operations of one turn travel in one message, and their answers come back in one.
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { LimitRefusal } from "../../src/billing/admission.js";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { RemoteSqliteBillingWrites } from "../../src/billing/sqlite-billing-remote.js";
import { BillingWriteAnswerer, LocalSqliteBillingWrites, type BillingWriteBatch } from "../../src/billing/sqlite-billing-writes.js";
import { applicableLimits, NO_TIER_LIMITS, subjectLimitsFromInput } from "../../src/core/traffic-limits.js";
import { GatewayError } from "../../src/errors/catalogue.js";
import type { Store } from "../../src/store/index.js";
import { admission, counters, makeAccount, makeKey, MODEL, usage, useBillingStore } from "./support.js";

const USD = 1_000_000_000n;

/** The messages a channel carried: `sent` to the owner (operations in each), `answered` back (answers in each). */
interface Channel {
  stopped: boolean;
  sent: number[];
  answered: number[];
}

/** A worker's billing whose writes the owner commits; `batches` counts the owner's group transactions. */
function workerOf(store: Store, owner: LocalSqliteBillingWrites, channel: Channel): StoreBilling {
  const answerer = new BillingWriteAnswerer(owner, (message) => {
    channel.answered.push(message.answers.length);
    const copy = structuredClone(message);
    setImmediate(() => remote.onAnswers(copy));
  });
  const remote: RemoteSqliteBillingWrites = new RemoteSqliteBillingWrites(
    (message: BillingWriteBatch) => {
      channel.sent.push(message.requests.length);
      if (channel.stopped) return; // an owner that stopped answering
      const copy = structuredClone(message);
      setImmediate(() => answerer.onRequests(copy));
    },
    { deadlineMs: 300 },
  );
  return new StoreBilling(store.handle, { sqliteWrites: remote });
}

describe("SQLite billing writes committed by one owner for several workers", () => {
  let store: Store;
  let owner: LocalSqliteBillingWrites;
  let batches = 0;
  const channel: Channel = { stopped: false, sent: [], answered: [] };
  let workers: StoreBilling[];
  useBillingStore("sqlite", (f) => {
    store = f.store;
    owner = new LocalSqliteBillingWrites(store.handle, { onBatch: () => (batches += 1) });
    workers = [workerOf(store, owner, channel), workerOf(store, owner, channel)];
  });

  it("two workers' admissions and settlements commit in shared batches; the books are exact and never overdrawn", async () => {
    const accountId = await makeAccount(store, { balance: 30n * 7_500_000n }); // room for 30 default projections
    const keyId = await makeKey(store, accountId);
    const before = batches;
    const results = await Promise.allSettled(Array.from({ length: 100 }, (_, i) => workers[i % 2]!.admit(admission(accountId, keyId))));
    const holds = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    expect(holds).toHaveLength(30);
    for (const r of results) if (r.status === "rejected") expect(r.reason).toMatchObject({ type: "quota_exceeded", details: { code: "insufficient_balance" } });
    // 100 admissions from two workers in a handful of transactions, not 100.
    expect(batches - before).toBeLessThan(10);
    // The holds come back whole: model config and all, built by the worker.
    expect(holds[0]!.model).toBe(MODEL);

    const charges = await Promise.all(holds.map((hold, i) => workers[i % 2]!.settle(hold, usage(100, 100), "mock")));
    expect(charges.every((c) => c.recorded && c.cost === 1_250_000n)).toBe(true);
    // A replay through the other worker: answered with the first charge, nothing written.
    expect(await workers[1]!.settle(holds[0]!, usage(999, 999), "mock")).toEqual({ cost: 1_250_000n, recorded: false });
    const state = await counters(store, accountId, keyId);
    expect(state.ledger).toBe(30);
    expect(state.account).toMatchObject({ balance_nano: 30n * 7_500_000n - 30n * 1_250_000n, total_spent_nano: 30n * 1_250_000n, held_nano: 0n, held_tokens: 0n });
    expect(state.holds).toEqual([]);
  });

  it("releases, traffic figures and clampable refusals (with their headroom) cross the channel as they are", async () => {
    const accountId = await makeAccount(store, { balance: 10_000_000n });
    const keyId = await makeKey(store, accountId);
    const limits = applicableLimits(NO_TIER_LIMITS, { keyId, accountId, keyLimits: subjectLimitsFromInput({ requests_per_minute: 60 }), accountLimits: null }, MODEL.id);
    const hold = await workers[0]!.admit(admission(accountId, keyId, 1000, 500, { limits }));
    expect(hold.traffic?.requests).toMatchObject({ limit: 60, remaining: 59 });
    const refused = await workers[1]!.admit(admission(accountId, keyId)).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(LimitRefusal);
    expect((refused as LimitRefusal).headroom).toMatchObject({ balance: 2_500_000n, keyCost: null });
    await workers[1]!.release(hold);
    await workers[0]!.release(hold); // twice: nothing more
    expect((await counters(store, accountId, keyId)).account).toMatchObject({ held_nano: 0n, balance_nano: 10_000_000n });
  });

  it("a failure injected into a group transaction fails that settlement alone, with everything unchanged", async () => {
    const ok = await makeAccount(store, { balance: USD });
    const okKey = await makeKey(store, ok);
    const failing = await makeAccount(store, { balance: USD });
    const failingKey = await makeKey(store, failing);
    const okHold = await workers[0]!.admit(admission(ok, okKey));
    const failingHold = await workers[1]!.admit(admission(failing, failingKey));
    const failingBefore = await counters(store, failing, failingKey);
    await sql`create trigger fail_shared_batch before insert on monthly_usage when new.account_id = ${sql.lit(failing)}
      begin select raise(abort, 'injected failure'); end`.execute(store.db);
    try {
      const [charged, failed, admitted] = await Promise.allSettled([
        workers[0]!.settle(okHold, usage(100, 100), "mock"),
        workers[1]!.settle(failingHold, usage(100, 100), "mock"),
        workers[1]!.admit(admission(ok, okKey)),
      ]);
      expect(charged).toMatchObject({ status: "fulfilled", value: { recorded: true } });
      expect(failed).toMatchObject({ status: "rejected", reason: { type: "ledger_write_failed", status: 502 } });
      expect(admitted.status).toBe("fulfilled");
      expect(await counters(store, failing, failingKey)).toEqual(failingBefore);
      expect((await counters(store, ok, okKey)).ledger).toBe(1);
    } finally {
      await sql`drop trigger fail_shared_batch`.execute(store.db);
    }
  });

  it("a worker's operations of one turn travel in one message, and their answers come back in one", async () => {
    const accountId = await makeAccount(store, { balance: USD });
    const keyId = await makeKey(store, accountId);
    channel.sent = [];
    channel.answered = [];
    const holds = await Promise.all(Array.from({ length: 8 }, () => workers[0]!.admit(admission(accountId, keyId))));
    expect(channel.sent).toEqual([8]);
    expect(channel.answered).toEqual([8]);
    channel.sent = [];
    channel.answered = [];
    const settled = await Promise.all(holds.slice(0, 6).map((hold) => workers[0]!.settle(hold, usage(100, 100), "mock")));
    const released = await Promise.all([workers[1]!.release(holds[6]!), workers[1]!.release(holds[7]!)]);
    expect(settled.every((charge) => charge.recorded && charge.cost === 1_250_000n)).toBe(true);
    expect(released).toHaveLength(2);
    expect(channel.sent).toEqual([6, 2]);
    expect(channel.answered).toEqual([6, 2]);
    const state = await counters(store, accountId, keyId);
    expect(state.ledger).toBe(6);
    expect(state.account).toMatchObject({ held_nano: 0n, total_spent_nano: 6n * 1_250_000n });
  });

  it("a failure in one message of a worker fails that operation alone; the others of the message commit", async () => {
    const ok = await makeAccount(store, { balance: USD });
    const okKey = await makeKey(store, ok);
    const failing = await makeAccount(store, { balance: USD });
    const failingKey = await makeKey(store, failing);
    const [okHold, failingHold] = await Promise.all([workers[0]!.admit(admission(ok, okKey)), workers[0]!.admit(admission(failing, failingKey))]);
    const failingBefore = await counters(store, failing, failingKey);
    await sql`create trigger fail_one_of_message before insert on monthly_usage when new.account_id = ${sql.lit(failing)}
      begin select raise(abort, 'injected failure'); end`.execute(store.db);
    channel.sent = [];
    channel.answered = [];
    try {
      const [charged, failed, admitted] = await Promise.allSettled([
        workers[0]!.settle(okHold, usage(100, 100), "mock"),
        workers[0]!.settle(failingHold, usage(100, 100), "mock"),
        workers[0]!.admit(admission(ok, okKey)),
      ]);
      expect(channel.sent).toEqual([3]);
      expect(channel.answered).toEqual([3]);
      expect(charged).toMatchObject({ status: "fulfilled", value: { recorded: true, cost: 1_250_000n } });
      expect(failed).toMatchObject({ status: "rejected", reason: { type: "ledger_write_failed", status: 502 } });
      expect(admitted.status).toBe("fulfilled");
      expect(await counters(store, failing, failingKey)).toEqual(failingBefore);
      const okState = await counters(store, ok, okKey);
      expect(okState.ledger).toBe(1);
      expect(okState.holds).toHaveLength(1); // the second admission's
    } finally {
      await sql`drop trigger fail_one_of_message`.execute(store.db);
    }
  });

  it("an owner that does not answer fails the call with the catalogue's error, not a hang; a late commit is settled once", async () => {
    const accountId = await makeAccount(store, { balance: USD });
    const keyId = await makeKey(store, accountId);
    const hold = await workers[0]!.admit(admission(accountId, keyId));
    channel.stopped = true;
    try {
      const started = Date.now();
      const admit = await workers[0]!.admit(admission(accountId, keyId)).catch((error: unknown) => error);
      expect(admit).toBeInstanceOf(GatewayError);
      expect(admit).toMatchObject({ type: "ledger_write_failed", status: 502, details: { code: "billing_writer_unavailable" } });
      expect(Date.now() - started).toBeLessThan(5_000);
      await expect(workers[0]!.settle(hold, usage(100, 100), "mock")).rejects.toMatchObject({ type: "ledger_write_failed" });
    } finally {
      channel.stopped = false;
    }
    // The settlement's retry (settlement-retries.ts) after the owner is back: charged once.
    expect(await workers[1]!.settle(hold, usage(100, 100), "mock")).toEqual({ cost: 1_250_000n, recorded: true });
    expect(await workers[0]!.settle(hold, usage(100, 100), "mock")).toEqual({ cost: 1_250_000n, recorded: false });
    expect((await counters(store, accountId, keyId)).ledger).toBe(1);
  });

  it("a closed channel fails every call in flight and every later one at once", async () => {
    const accountId = await makeAccount(store, { balance: USD });
    const keyId = await makeKey(store, accountId);
    const remote = new RemoteSqliteBillingWrites(() => undefined, { deadlineMs: 60_000 });
    const billing = new StoreBilling(store.handle, { sqliteWrites: remote });
    const inFlight = billing.admit(admission(accountId, keyId)).catch((error: unknown) => error);
    remote.close();
    expect(await inFlight).toMatchObject({ type: "ledger_write_failed", details: { code: "billing_writer_unavailable" } });
    await expect(billing.admit(admission(accountId, keyId))).rejects.toMatchObject({ type: "ledger_write_failed" });
    const sendFails = new RemoteSqliteBillingWrites((_request, failed) => failed(), { deadlineMs: 60_000 });
    await expect(new StoreBilling(store.handle, { sqliteWrites: sendFails }).admit(admission(accountId, keyId))).rejects.toMatchObject({
      details: { code: "billing_writer_unavailable" },
    });
    expect((await counters(store, accountId, keyId)).holds).toEqual([]);
  });
});
