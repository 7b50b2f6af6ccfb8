// Rate and concurrency limits inside the admission transaction (src/core/traffic-limits.ts), on
// both databases: exact counts under concurrent admissions, refusals that change nothing, slots freed
// by settlement, release and the expiry sweeper, the token correction, and a failure injected into
// the admission leaving every counter as it was.
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { StoreBilling } from "../../src/billing/billing-store.js";
import { SqliteWriter, type SqlExec } from "../../src/store/sqlite-writer.js";
import { applicableLimits, currentWindow, NO_TIER_LIMITS, subjectLimitsFromInput, WINDOW_MS, type SubjectLimitsInput, type TrafficLimit } from "../../src/core/traffic-limits.js";
import { limitsField } from "../../src/billing/admission-postgres.js";
import { trafficWindows } from "../../src/billing/traffic-windows-sqlite.js";
import type { Hold } from "../../src/billing/types.js";
import { GatewayError } from "../../src/errors/catalogue.js";
import type { Store } from "../../src/store/index.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { admission, Clock, counters, makeAccount, makeKey, MODEL, usage, useBillingStore } from "./support.js";

const USD = 1_000_000_000n;

function keyLimits(accountId: string, keyId: string, own: SubjectLimitsInput, account: SubjectLimitsInput | null = null): TrafficLimit[] {
  return applicableLimits(
    NO_TIER_LIMITS,
    { keyId, accountId, keyLimits: subjectLimitsFromInput(own), accountLimits: account === null ? null : subjectLimitsFromInput(account) },
    MODEL.id,
  );
}

async function windows(store: Store) {
  return store.db.selectFrom("traffic_windows").selectAll().orderBy("scope").execute();
}

function countsOf(w: { window_start: bigint; requests: bigint; tokens: bigint; in_flight: bigint }) {
  return { windowStart: Number(w.window_start), requests: Number(w.requests), tokens: Number(w.tokens), inFlight: Number(w.in_flight) };
}

async function settleAll<T>(promises: Promise<T>[]): Promise<{ admitted: T[]; refused: GatewayError[] }> {
  const results = await Promise.allSettled(promises);
  const admitted: T[] = [];
  const refused: GatewayError[] = [];
  for (const r of results) {
    if (r.status === "fulfilled") admitted.push(r.value);
    else if (r.reason instanceof GatewayError) refused.push(r.reason);
    else throw r.reason;
  }
  return { admitted, refused };
}

for (const kind of DATABASE_KINDS) {
  describe(`traffic limits on ${kind}`, () => {
    const clock = new Clock(Date.UTC(2026, 10, 24, 12, 0, 0));
    let store: Store;
    let billing: StoreBilling;
    useBillingStore(kind, (f) => ({ store, billing } = f), { now: clock.now });

    it("rpm 60: of 200 concurrent admissions exactly 60 pass; the rest are 429 key_rpm_exceeded and hold nothing", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const limits = keyLimits(accountId, keyId, { requests_per_minute: 60 });
      const before = await counters(store, accountId, keyId);
      const { admitted, refused } = await settleAll(Array.from({ length: 200 }, () => billing.admit(admission(accountId, keyId, 10, 10, { limits }))));
      expect(admitted).toHaveLength(60);
      expect(refused).toHaveLength(140);
      for (const error of refused) {
        // The refusing limit's figures as they stood, the same on both databases.
        expect(error).toMatchObject({ type: "rate_limit_error", status: 429, details: { code: "key_rpm_exceeded" } });
        expect(error.details.headers).toEqual({
          "retry-after": "60",
          "x-ratelimit-limit-requests": "60",
          "x-ratelimit-remaining-requests": "0",
          "x-ratelimit-reset-requests": "1m0s",
        });
        expect(error.message).toMatch(/gateway's own limit, not the upstream provider's/);
      }
      // The headers' figures: each admission saw one fewer remaining, down to 0.
      expect(admitted.map((h) => h.traffic?.requests?.remaining).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 60 }, (_, i) => i));
      expect(admitted.every((h) => h.traffic?.requests?.limit === 60 && h.traffic.tokens === null)).toBe(true);
      const after = await counters(store, accountId, keyId);
      expect(after.holds).toHaveLength(60);
      expect(after.account.held_nano).toBe(before.account.held_nano + 60n * admitted[0]!.amount);
      expect(await windows(store)).toEqual([{ scope: `key:${keyId}`, window_start: BigInt(clock.ms), requests: 60n, tokens: 1200n, in_flight: 60n }]);

      // Settling frees the slots; the window still refuses until it ends, then a new one starts.
      for (const hold of admitted) await billing.settle(hold, usage(10, 10), "mock");
      await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits }))).rejects.toMatchObject({ details: { code: "key_rpm_exceeded" } });
      clock.advance(WINDOW_MS - 1500);
      await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits }))).rejects.toMatchObject({ details: { headers: { "retry-after": "2" } } });
      clock.advance(1500);
      const next = await billing.admit(admission(accountId, keyId, 10, 10, { limits }));
      expect(next.traffic?.requests).toEqual({ limit: 60, remaining: 59, resetMs: WINDOW_MS });
      await billing.release(next);
      await store.db.deleteFrom("traffic_windows").execute();
    });

    it("tpm: the projection counts at admission and is corrected to the actual tokens at settlement", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      // Key 10,000 tokens, account 20,000: the key is the tighter.
      const limits = keyLimits(accountId, keyId, { tokens_per_minute: 10_000 }, { tokens_per_minute: 20_000 });
      const { admitted, refused } = await settleAll(Array.from({ length: 50 }, () => billing.admit(admission(accountId, keyId, 1000, 500, { limits }))));
      expect(admitted).toHaveLength(6);
      expect(refused.every((e) => e.details.code === "key_tpm_exceeded")).toBe(true);
      // 1,000 of the key's tokens were left, too few for 1,500 projected.
      expect(refused.every((e) => e.details.headers?.["x-ratelimit-remaining-tokens"] === "1000" && e.details.headers["x-ratelimit-limit-tokens"] === "10000")).toBe(true);
      expect(admitted.map((h) => h.traffic?.tokens?.remaining).sort((a, b) => a! - b!)).toEqual([1000, 2500, 4000, 5500, 7000, 8500]);
      // Actual 100 + 50 tokens each: the key's window gives back 1,350 per settlement.
      for (const hold of admitted) await billing.settle(hold, usage(100, 50), "mock");
      const rows = await windows(store);
      expect(rows.map((r) => [r.scope, r.tokens, r.in_flight])).toEqual([
        [`account:${accountId}`, 900n, 0n],
        [`key:${keyId}`, 900n, 0n],
      ]);
      const more = await billing.admit(admission(accountId, keyId, 1000, 500, { limits }));
      expect(more.traffic?.tokens).toMatchObject({ limit: 10_000, remaining: 10_000 - 900 - 1500 });
      // A release gives back the whole projection (nothing was delivered).
      await billing.release(more);
      expect((await windows(store)).find((r) => r.scope === `key:${keyId}`)?.tokens).toBe(900n);
      await store.db.deleteFrom("traffic_windows").execute();
    });

    it("a settlement after the window ended does not correct the next window's tokens", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const limits = keyLimits(accountId, keyId, { tokens_per_minute: 10_000 });
      const old = await billing.admit(admission(accountId, keyId, 1000, 500, { limits }));
      clock.advance(WINDOW_MS);
      const current = await billing.admit(admission(accountId, keyId, 1000, 500, { limits }));
      await billing.settle(old, usage(10, 10), "mock");
      const [row] = await windows(store);
      expect(row).toMatchObject({ window_start: BigInt(clock.ms), tokens: 1500n, in_flight: 1n });
      await billing.settle(current, usage(10, 10), "mock");
      expect((await windows(store))[0]).toMatchObject({ tokens: 20n, in_flight: 0n });
      await store.db.deleteFrom("traffic_windows").execute();
    });

    it("concurrency: slots freed by settlement, release and the expiry sweeper; the 429 says Retry-After 1", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const limits = keyLimits(accountId, keyId, {}, { concurrent_requests: 3 });
      const { admitted, refused } = await settleAll(Array.from({ length: 10 }, () => billing.admit(admission(accountId, keyId, 10, 10, { limits }))));
      expect(admitted).toHaveLength(3);
      expect(refused[0]).toMatchObject({ status: 429, details: { code: "account_concurrency_exceeded", headers: { "retry-after": "1" } } });
      const [a, b, c] = admitted as [Hold, Hold, Hold];
      await billing.settle(a, usage(10, 10), "mock");
      const d = await billing.admit(admission(accountId, keyId, 10, 10, { limits }));
      await billing.release(b);
      await billing.release(b); // a second release frees nothing more
      const e = await billing.admit(admission(accountId, keyId, 10, 10, { limits }));
      await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits }))).rejects.toMatchObject({ details: { code: "account_concurrency_exceeded" } });
      // c expires and is swept: its slot frees; a late settlement of it then changes no counter.
      clock.advance(16 * 60_000);
      expect(await billing.releaseExpiredHolds()).toBeGreaterThanOrEqual(1);
      expect((await windows(store))[0]!.in_flight).toBe(0n);
      await billing.settle(c, usage(10, 10), "mock");
      expect((await windows(store))[0]!.in_flight).toBe(0n);
      void d;
      void e;
      await store.db.deleteFrom("traffic_windows").execute();
    });

    it("per-model limits apply to their model only, with their own codes", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const limits = keyLimits(accountId, keyId, { requests_per_minute: 100, models: { [MODEL.id]: { requests_per_minute: 1 } } });
      expect(limits.map((l) => l.subject)).toEqual(["key", "key_model"]);
      const other = applicableLimits(
        NO_TIER_LIMITS,
        { keyId, accountId, keyLimits: subjectLimitsFromInput({ models: { [MODEL.id]: { requests_per_minute: 1 } } }), accountLimits: null },
        "other",
      );
      expect(other).toEqual([]);
      const first = await billing.admit(admission(accountId, keyId, 10, 10, { limits }));
      expect(first.traffic?.requests).toMatchObject({ limit: 1, remaining: 0 });
      await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits }))).rejects.toMatchObject({ details: { code: "key_model_rpm_exceeded" } });
      await billing.release(first);
      await store.db.deleteFrom("traffic_windows").execute();
    });

    it("a refusal by a later limit takes back what the earlier ones counted, in an open window and a new one", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const keyOnly = keyLimits(accountId, keyId, { requests_per_minute: 100 });
      const both = (account: SubjectLimitsInput) => keyLimits(accountId, keyId, { requests_per_minute: 100 }, account);
      // As seen from now on: each scope's current window (a window that has ended reads as a new, empty one).
      const seen = async () => (await windows(store)).map((w) => ({ scope: w.scope, ...currentWindow(countsOf(w), clock.now()) }));
      const first = await billing.admit(admission(accountId, keyId, 10, 10, { limits: both({ requests_per_minute: 1 }) }));

      // The key's window is open: the account's rpm refuses, the key's count is taken back exactly.
      let before = await windows(store);
      await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits: both({ requests_per_minute: 1 }) }))).rejects.toMatchObject({
        details: { code: "account_rpm_exceeded" },
      });
      expect(await windows(store)).toEqual(before);
      // The account's tpm refuses a projection larger than the limit itself.
      await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits: both({ tokens_per_minute: 5 }) }))).rejects.toMatchObject({
        details: { code: "account_tpm_exceeded" },
      });
      expect(await windows(store)).toEqual(before);

      // The key's window has ended while the account's (opened 30 s later) has not: the refused
      // admission would open the key's next window; afterwards nothing of it shows.
      clock.advance(30_000);
      await billing.release(first);
      await store.db.deleteFrom("traffic_windows").where("scope", "=", `account:${accountId}`).execute();
      const second = await billing.admit(admission(accountId, keyId, 10, 10, { limits: keyLimits(accountId, keyId, {}, { requests_per_minute: 1 }) }));
      clock.advance(31_000);
      before = await windows(store);
      const seenBefore = await seen();
      await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits: both({ requests_per_minute: 1 }) }))).rejects.toMatchObject({
        details: { code: "account_rpm_exceeded" },
      });
      expect(await seen()).toEqual(seenBefore);
      // The next admission opens the key's window at its own time, as if the refused one never came.
      clock.advance(5_000);
      const third = await billing.admit(admission(accountId, keyId, 10, 10, { limits: keyOnly }));
      const key = (await windows(store)).find((w) => w.scope === `key:${keyId}`)!;
      expect({ start: Number(key.window_start), requests: key.requests, inFlight: key.in_flight }).toEqual({ start: clock.now(), requests: 1n, inFlight: 1n });
      expect(before.find((w) => w.scope === `key:${keyId}`)!.in_flight).toBe(0n);
      await billing.release(second);
      await billing.release(third);
      await store.db.deleteFrom("traffic_windows").execute();
    });

    it("admissions with different limits sent together (one batch on PostgreSQL) each count against their own", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const keyOnly = keyLimits(accountId, keyId, { requests_per_minute: 4 });
      const withAccount = keyLimits(accountId, keyId, { requests_per_minute: 4 }, { requests_per_minute: 2 });
      // Interleaved: gw_batch reuses a parsed limits text only while the next admission's is the same.
      const lists = [keyOnly, withAccount, keyOnly, withAccount, keyOnly, withAccount];
      const results = await Promise.allSettled(lists.map((limits) => billing.admit(admission(accountId, keyId, 10, 10, { limits }))));
      // Whatever the order: the key's 4 requests in all, of which the account's 2 at most.
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(4);
      const admittedWithAccount = results.filter((r, i) => r.status === "fulfilled" && lists[i] === withAccount).length;
      const counted = Object.fromEntries((await windows(store)).filter((w) => w.scope.endsWith(accountId) || w.scope.endsWith(keyId)).map((w) => [w.scope, w.requests]));
      expect(counted).toEqual({ [`key:${keyId}`]: 4n, [`account:${accountId}`]: BigInt(admittedWithAccount) });
      expect(admittedWithAccount).toBeLessThanOrEqual(2);
      for (const r of results) if (r.status === "fulfilled") await billing.release(r.value);
      await store.db.deleteFrom("traffic_windows").execute();
    });

    it("a money refusal (402) comes before a rate limit and counts nothing", async () => {
      const accountId = await makeAccount(store, { balance: 1n });
      const keyId = await makeKey(store, accountId);
      const limits = keyLimits(accountId, keyId, { requests_per_minute: 1 });
      await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits }))).rejects.toMatchObject({ status: 402 });
      expect(await windows(store)).toEqual([]);
    });

    it("a failure injected into the admission transaction leaves every counter unchanged", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const limits = keyLimits(accountId, keyId, { requests_per_minute: 10, concurrent_requests: 5 });
      const held = await billing.admit(admission(accountId, keyId, 10, 10, { limits }));
      const before = { counters: await counters(store, accountId, keyId), windows: await windows(store) };
      const id = sql.lit(accountId);
      if (store.dialect === "sqlite") {
        await sql`create trigger fail_holds before insert on holds when new.account_id = ${id} begin select raise(abort, 'injected failure'); end`.execute(store.db);
      } else {
        await sql`create function fail_holds() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`.execute(store.db);
        await sql`create trigger fail_holds before insert on holds for each row when (new.account_id = ${id}) execute function fail_holds()`.execute(store.db);
      }
      try {
        await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits }))).rejects.toThrow(/injected failure/);
        expect({ counters: await counters(store, accountId, keyId), windows: await windows(store) }).toEqual(before);
      } finally {
        await sql`drop trigger fail_holds${sql.raw(store.dialect === "postgres" ? " on holds" : "")}`.execute(store.db);
        if (store.dialect === "postgres") await sql`drop function fail_holds()`.execute(store.db);
      }
      await billing.release(held);
      await store.db.deleteFrom("traffic_windows").execute();
    });

    it("without limits admission touches no traffic window and the hold counts nothing", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const hold = await billing.admit(admission(accountId, keyId));
      expect(hold.traffic).toBeUndefined();
      const row = await store.db.selectFrom("holds").select("traffic").where("id", "=", hold.id).executeTakeFirstOrThrow();
      expect(row.traffic).toBeNull();
      await billing.settle(hold, usage(10, 10), "mock");
      expect(await windows(store)).toEqual([]);
    });
  });
}

/**
 * After a failed write left the windows as `held`'s admission stored them (rpm 3): two more admissions
 * pass, the fourth is refused, and releasing all three frees every slot and token.
 */
async function expectCountingFromTheStoredRow(store: Store, billing: StoreBilling, clock: Clock, held: Hold, limits: TrafficLimit[]): Promise<void> {
  const { accountId, keyId } = held;
  const second = await billing.admit(admission(accountId, keyId, 10, 10, { limits }));
  const third = await billing.admit(admission(accountId, keyId, 10, 10, { limits }));
  await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits }))).rejects.toMatchObject({ details: { code: "key_rpm_exceeded" } });
  expect((await windows(store)).map(countsOf)).toEqual([{ windowStart: clock.now(), requests: 3, tokens: 60, inFlight: 3 }]);
  for (const hold of [held, second, third]) await billing.release(hold);
  expect((await windows(store)).map(countsOf)).toEqual([{ windowStart: clock.now(), requests: 3, tokens: 0, inFlight: 0 }]);
  await store.db.deleteFrom("traffic_windows").execute();
}

// SQLite keeps each scope's counters in memory for the rest of a write transaction (traffic-windows-sqlite.ts):
// a transaction rolled back after counting must take that memory with it, or the next one would write it.
describe("traffic windows of a SQLite write transaction", () => {
  const clock = new Clock(Date.UTC(2026, 10, 24, 12, 0, 0));
  let store: Store;
  let billing: StoreBilling;
  useBillingStore("sqlite", (f) => ({ store, billing } = f), { now: clock.now });

  it("are discarded when the transaction rolls back after a count", async () => {
    const accountId = await makeAccount(store, { balance: USD });
    const keyId = await makeKey(store, accountId);
    const limits = keyLimits(accountId, keyId, { requests_per_minute: 3, concurrent_requests: 5 });
    const held = await billing.admit(admission(accountId, keyId, 10, 10, { limits }));
    const before = await windows(store);
    expect(before.map(countsOf)).toEqual([{ windowStart: clock.now(), requests: 1, tokens: 20, inFlight: 1 }]);

    // A failure injected into the writer's transaction after the count: on its own, then with another operation in the batch.
    const writer = new SqliteWriter(store.db, store.handle.sqlite!);
    const countThenFail = (exec: SqlExec) => {
      expect(trafficWindows(exec).admit(exec, limits, clock.now(), 20)).toHaveProperty("next");
      throw new Error("injected after the count");
    };
    await expect(writer.run(countThenFail)).rejects.toThrow(/injected after the count/);
    const batch = await Promise.allSettled([writer.run(countThenFail), writer.run(() => "other")]);
    expect(batch.map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
    // The same through admission: the hold's insert fails after the traffic count.
    const id = sql.lit(accountId);
    await sql`create trigger fail_holds before insert on holds when new.account_id = ${id} begin select raise(abort, 'injected failure'); end`.execute(store.db);
    try {
      await expect(billing.admit(admission(accountId, keyId, 10, 10, { limits }))).rejects.toThrow(/injected failure/);
    } finally {
      await sql`drop trigger fail_holds`.execute(store.db);
    }
    expect(await windows(store)).toEqual(before);

    await expectCountingFromTheStoredRow(store, billing, clock, held, limits);
  });
});

// PostgreSQL keeps each scope's counters in gw_batch's variables for the whole call and writes them at
// its end (traffic-functions.ts): an operation that raises after others counted must leave no count.
/** An admission of 10 nano-USD and 20 tokens as gw_batch reads it (gw-batch-function.ts). */
function admitOperation(accountId: string, keyId: string, holdId: string, now: number, limits: readonly TrafficLimit[]) {
  const fields = { account: accountId, key: keyId, request: `req_${holdId}`, hold: holdId, amount: "10", tokens: "20", month: "2026-11" };
  return { k: "admit", ...fields, now: String(now), expires: String(now + 60_000), periods: { day: "0", week: "0", month: "0" }, limits: limitsField(limits) };
}

describe("traffic windows of a PostgreSQL gw_batch call", () => {
  const clock = new Clock(Date.UTC(2026, 10, 24, 12, 0, 0));
  let store: Store;
  let billing: StoreBilling;
  useBillingStore("postgres", (f) => ({ store, billing } = f), { now: clock.now });

  it("leave nothing when an operation fails after a count in the same call", async () => {
    const accountId = await makeAccount(store, { balance: USD });
    const keyId = await makeKey(store, accountId);
    const limits = keyLimits(accountId, keyId, { requests_per_minute: 3, concurrent_requests: 5 });
    const held = await billing.admit(admission(accountId, keyId, 10, 10, { limits }));
    const before = await windows(store);
    expect(before.map(countsOf)).toEqual([{ windowStart: clock.now(), requests: 1, tokens: 20, inFlight: 1 }]);

    const admit = (holdId: string) => admitOperation(accountId, keyId, holdId, clock.now(), limits);
    // Counts an admission, ends the first hold, then admits a hold whose id is taken: the call raises.
    const ops = [admit("hold_counted"), { k: "release", hold: held.id, expired_before: null }, admit("hold_counted")];
    const outcome = await sql`select gw_batch(${JSON.stringify(ops)}::jsonb)`.execute(store.db).then(
      () => "committed",
      (error: unknown) => String(error),
    );
    expect(await windows(store)).toEqual(before);
    expect(outcome).toMatch(/duplicate key/);

    await expectCountingFromTheStoredRow(store, billing, clock, held, limits);
  });

  it("answer an admission's windows as the previous version did, one [start, requests, tokens, in flight] per limit", async () => {
    // A gateway process of the previous version still running against the re-created function reads this shape.
    const accountId = await makeAccount(store, { balance: USD });
    const keyId = await makeKey(store, accountId);
    const limits = keyLimits(accountId, keyId, { requests_per_minute: 3 }, { concurrent_requests: 5 });
    const now = clock.now();
    const admit = (holdId: string) => admitOperation(accountId, keyId, holdId, now, limits);
    const { rows } = await sql<{
      answers: { outcome: string; windows: unknown }[];
    }>`select gw_batch(${JSON.stringify([admit("hold_a"), admit("hold_b")])}::jsonb) as answers`.execute(store.db);
    expect(rows[0]!.answers.map((answer) => [answer.outcome, answer.windows])).toEqual([
      [
        "ok",
        [
          [now, 1, 20, 1],
          [now, 1, 20, 1],
        ],
      ],
      [
        "ok",
        [
          [now, 2, 40, 2],
          [now, 2, 40, 2],
        ],
      ],
    ]);
    await sql`delete from holds where id in ('hold_a', 'hold_b')`.execute(store.db);
    await store.db.deleteFrom("traffic_windows").execute();
  });
});
