// Holds of a dead process (issue 44, ADR 0054), on both databases: two StoreBillings on one database
// stand for two gateway processes. The sweep releases the holds of a process whose liveness row ran
// out (or is gone), not those of a live one, nor a hold that names no process (a video task's, or
// one the previous release took) before its expiry; a late settlement of a released hold is charged
// once, exactly as one after expiry; a graceful close releases its own holds, then removes its row.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { LIVENESS_TTL_MS } from "../../src/billing/process-liveness.js";
import type { Store } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { admission, Clock, counters, makeAccount, makeKey, openTestStore, usage } from "./support.js";

const USD = 1_000_000_000n;
const START = Date.UTC(2026, 2, 10, 12, 0, 0);
// Long enough that no timer renews a row during a test: the tests renew and let rows run out themselves.
const QUIET = { renewMs: 3_600_000 };

for (const kind of DATABASE_KINDS) {
  describe(`holds of a dead process on ${kind}`, () => {
    let database: TestDatabase;
    let store: Store;
    const clock = new Clock(START);
    const open: StoreBilling[] = [];

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      store = await openTestStore(database);
    });
    afterAll(async () => {
      for (const billing of open) await billing.stopSweeper();
      await store.close();
      await database.drop();
    });

    async function processWithLiveness(): Promise<StoreBilling> {
      const billing = new StoreBilling(store.handle, { now: clock.now });
      await billing.startLiveness(QUIET);
      open.push(billing);
      return billing;
    }

    async function holders(): Promise<Array<{ holder: string | null; request_id: string }>> {
      // Sorted here, as the expected lists are: SQL's collation may order random ids otherwise.
      const rows = await store.db.selectFrom("holds").select(["holder", "request_id"]).execute();
      return rows.sort((a, b) => a.request_id.localeCompare(b.request_id));
    }

    it("a holder whose liveness ran out loses its holds at the next sweep; a live holder's and a hold without holder stay", async () => {
      const dead = await processWithLiveness();
      const live = await processWithLiveness();
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const lost = await dead.admit(admission(accountId, keyId));
      const kept = await live.admit(admission(accountId, keyId, 100, 100));
      // A video task's hold (a lifetime of its own) names no process: it outlives the one that took it.
      const video = await dead.admit(admission(accountId, keyId, 10, 10), { ttlMs: 3_600_000 });
      expect(await holders()).toEqual(
        [
          { holder: dead.holder, request_id: lost.requestId },
          { holder: live.holder, request_id: kept.requestId },
          { holder: null, request_id: video.requestId },
        ].sort((a, b) => a.request_id.localeCompare(b.request_id)),
      );

      // Both rows are alive: nothing is released (the sweep renews the sweeping process's own row).
      expect(await live.releaseExpiredHolds()).toBe(0);
      // The dead process renews no more; the live one does.
      clock.advance(LIVENESS_TTL_MS - 1);
      expect(await live.releaseExpiredHolds()).toBe(0);
      clock.advance(1);
      expect(await live.releaseExpiredHolds()).toBe(1);
      const state = await counters(store, accountId, keyId);
      expect(state.holds.map((h) => h.request_id).sort()).toEqual([kept.requestId, video.requestId].sort());
      expect(state.account).toMatchObject({ balance_nano: USD, held_nano: kept.amount + video.amount, held_tokens: 220n });
      expect(state.key).toMatchObject({ held_nano: kept.amount + video.amount, held_tokens: 220n });
      // Once no hold names it, the dead process's row is forgotten; the live one's stays.
      const rows = await store.db.selectFrom("gateway_processes").select("holder").execute();
      expect(rows.map((r) => r.holder)).toEqual([live.holder]);

      await live.release(kept);
      await live.release(video);
    });

    it("a late settlement of a hold released for its dead holder charges once, as after expiry (the balance stops at 0, the shortfall noted)", async () => {
      const cutOff = await processWithLiveness();
      const sweeper = await processWithLiveness();
      const accountId = await makeAccount(store, { balance: 10_000_000n });
      const keyId = await makeKey(store, accountId);
      const hold = await cutOff.admit(admission(accountId, keyId));
      // Another request takes the balance the release gave back, meanwhile.
      clock.advance(LIVENESS_TTL_MS + 1);
      expect(await sweeper.releaseExpiredHolds()).toBe(1);
      const other = await sweeper.admit(admission(accountId, keyId));
      await sweeper.settle(other, usage(0, 600), "mock");

      // The cut-off process was alive all along and settles: the full cost, once; no reservation given back twice.
      expect(await cutOff.settle(hold, usage(0, 700), "mock")).toEqual({ cost: 7_000_000n, recorded: true });
      expect(await cutOff.settle(hold, usage(0, 700), "mock")).toEqual({ cost: 7_000_000n, recorded: false });
      const state = await counters(store, accountId, keyId);
      expect(state.account).toEqual({ balance_nano: 0n, total_spent_nano: 13_000_000n, held_nano: 0n, held_tokens: 0n });
      expect(state.key).toMatchObject({ spent_nano: 13_000_000n, held_nano: 0n, held_tokens: 0n });
      expect(state.ledger).toBe(2);
      const row = await store.db.selectFrom("ledger").select(["cost_nano", "note"]).where("request_id", "=", hold.requestId).executeTakeFirstOrThrow();
      expect(row).toEqual({ cost_nano: 7_000_000n, note: "shortfall_nano=3000000" });
      // Its next renewal writes its row again (a sweeper forgot it): it is alive.
      await cutOff.releaseExpiredHolds();
      expect(await store.db.selectFrom("gateway_processes").select("holder").where("holder", "=", cutOff.holder!).execute()).toHaveLength(1);
    });

    it("a holder whose row is gone is dead; a hold without holder (the previous release's) waits for its expiry", async () => {
      const gone = await processWithLiveness();
      const sweeper = await processWithLiveness();
      const previousRelease = new StoreBilling(store.handle, { now: clock.now });
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      await gone.admit(admission(accountId, keyId));
      const old = await previousRelease.admit(admission(accountId, keyId, 100, 100));
      expect((await holders()).find((h) => h.request_id === old.requestId)?.holder).toBeNull();
      await store.db.deleteFrom("gateway_processes").where("holder", "=", gone.holder!).execute();
      expect(await sweeper.releaseExpiredHolds()).toBe(1);
      expect((await counters(store, accountId, keyId)).holds).toEqual([{ request_id: old.requestId }]);
      // The previous release's hold goes at its 15-minute expiry, as before.
      expect(await sweeper.releaseExpiredHolds(clock.ms + 15 * 60_000 - 1)).toBe(0);
      expect(await sweeper.releaseExpiredHolds(clock.ms + 15 * 60_000)).toBe(1);
      expect((await counters(store, accountId, keyId)).account).toMatchObject({ held_nano: 0n, held_tokens: 0n });
      // A release by id (not the sweeper's) still takes any hold, whatever its holder.
      const direct = await sweeper.admit(admission(accountId, keyId));
      await gone.release(direct);
      expect((await counters(store, accountId, keyId)).holds).toEqual([]);
    });

    it("close releases the holds that still name the process, then removes its row; holds of other processes stay", async () => {
      const closing = await processWithLiveness();
      const other = await processWithLiveness();
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      await closing.admit(admission(accountId, keyId));
      const kept = await other.admit(admission(accountId, keyId, 100, 100));
      const holder = closing.holder!;
      await closing.close();
      expect(closing.holder).toBeNull();
      const state = await counters(store, accountId, keyId);
      expect(state.holds).toEqual([{ request_id: kept.requestId }]);
      expect(state.account).toMatchObject({ held_nano: kept.amount, held_tokens: 200n });
      const rows = await store.db.selectFrom("gateway_processes").select("holder").where("holder", "in", [holder, other.holder!]).execute();
      expect(rows.map((r) => r.holder)).toEqual([other.holder]);
      await other.release(kept);
    });
  });
}
