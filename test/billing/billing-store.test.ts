// StoreBilling on both databases: admission (each 402 and the order of checks), settlement,
// idempotency, release, hold expiry, month rollover, key exhaustion and re-enable.
import { describe, expect, it } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import type { Store } from "../../src/store/index.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { admission, Clock, counters, DEFAULT_PROJECTION, expectRefusal, makeAccount, makeKey, usage, useBillingStore } from "./support.js";

const USD = 1_000_000_000n;
const JAN_31 = Date.UTC(2026, 0, 31, 23, 59, 0);

for (const kind of DATABASE_KINDS) {
  describe(`billing on ${kind}`, () => {
    let store: Store;
    let billing: StoreBilling;
    const clock = new Clock(JAN_31);
    useBillingStore(kind, (f) => ({ store, billing } = f), { now: clock.now });

    it("admit reserves the projection; settle replaces it with the exact charge in one go", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const hold = await billing.admit(admission(accountId, keyId, 1000, 500));
      expect(hold.amount).toBe(DEFAULT_PROJECTION);
      expect(hold.tokens).toBe(1500);
      let state = await counters(store, accountId, keyId);
      expect(state.account).toMatchObject({ balance_nano: USD, held_nano: DEFAULT_PROJECTION, held_tokens: 1500n });
      expect(state.key).toMatchObject({ held_nano: DEFAULT_PROJECTION, held_tokens: 1500n });
      expect(state.holds).toEqual([{ request_id: hold.requestId }]);

      // 600 × 2500 + 200 × 1250 + 300 × 10000 = 4,750,000 nano.
      const charge = await billing.settle(hold, usage(800, 300, { cachedInputTokens: 200, reasoningTokens: 50 }), "mock");
      expect(charge).toEqual({ cost: 4_750_000n, recorded: true });
      state = await counters(store, accountId, keyId);
      expect(state.account).toEqual({ balance_nano: USD - 4_750_000n, total_spent_nano: 4_750_000n, held_nano: 0n, held_tokens: 0n });
      expect(state.key).toEqual({ spent_nano: 4_750_000n, tokens_used: 1100n, held_nano: 0n, held_tokens: 0n, status: "enabled" });
      expect(state.monthly).toEqual([{ month: "2026-01", cost_nano: 4_750_000n, tokens: 1100n, requests: 1n }]);
      expect(state.holds).toEqual([]);
      const row = await store.db.selectFrom("ledger").selectAll().where("request_id", "=", hold.requestId).executeTakeFirstOrThrow();
      expect(row).toMatchObject({
        created_at: BigInt(JAN_31),
        account_id: accountId,
        key_id: keyId,
        kind: "usage",
        model: "mock-chat",
        provider: "mock",
        route: "chat",
        input_tokens: 800n,
        cached_tokens: 200n,
        output_tokens: 300n,
        reasoning_tokens: 50n,
        cost_nano: 4_750_000n,
        estimated: 0n,
        note: null,
      });
    });

    it("settling the same request twice records it once (also concurrently)", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const hold = await billing.admit(admission(accountId, keyId));
      expect(await billing.settle(hold, usage(100, 100), "mock")).toEqual({ cost: 1_250_000n, recorded: true });
      const before = await counters(store, accountId, keyId);
      expect(await billing.settle(hold, usage(999, 999), "mock")).toEqual({ cost: 1_250_000n, recorded: false });
      expect(await counters(store, accountId, keyId)).toEqual(before);

      const second = await billing.admit(admission(accountId, keyId));
      const results = await Promise.all([1, 2, 3].map(() => billing.settle(second, usage(100, 100), "mock")));
      expect(results.filter((r) => r.recorded)).toHaveLength(1);
      const after = await counters(store, accountId, keyId);
      expect(after.ledger).toBe(2);
      expect(after.account.total_spent_nano).toBe(2_500_000n);
      expect(after.account.held_nano).toBe(0n);
    });

    it("stores the estimated flag", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const hold = await billing.admit(admission(accountId, keyId));
      await billing.settle(hold, usage(1000, 37.25, { estimated: true }), "mock");
      const row = await store.db.selectFrom("ledger").select(["estimated", "output_tokens"]).where("request_id", "=", hold.requestId).executeTakeFirstOrThrow();
      expect(row).toEqual({ estimated: 1n, output_tokens: 38n });
    });

    it("release gives the hold back, once; a settlement after it still charges in full", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const hold = await billing.admit(admission(accountId, keyId));
      await billing.release(hold);
      await billing.release(hold);
      let state = await counters(store, accountId, keyId);
      expect(state.account).toEqual({ balance_nano: USD, total_spent_nano: 0n, held_nano: 0n, held_tokens: 0n });
      expect(state.key).toMatchObject({ held_nano: 0n, held_tokens: 0n });
      expect(state.holds).toEqual([]);
      expect(await billing.settle(hold, usage(100, 0), "mock")).toEqual({ cost: 250_000n, recorded: true });
      state = await counters(store, accountId, keyId);
      expect(state.account).toEqual({ balance_nano: USD - 250_000n, total_spent_nano: 250_000n, held_nano: 0n, held_tokens: 0n });
      await billing.release(hold);
      expect(await counters(store, accountId, keyId)).toEqual(state);
    });

    it("a cost above the balance is recorded in full; the balance stops at 0 and the shortfall is noted", async () => {
      const accountId = await makeAccount(store, { balance: 10_000_000n });
      const keyId = await makeKey(store, accountId);
      const hold = await billing.admit(admission(accountId, keyId));
      expect(await billing.settle(hold, usage(0, 2000), "mock")).toEqual({ cost: 20_000_000n, recorded: true });
      const state = await counters(store, accountId, keyId);
      expect(state.account).toEqual({ balance_nano: 0n, total_spent_nano: 20_000_000n, held_nano: 0n, held_tokens: 0n });
      expect(state.key.spent_nano).toBe(20_000_000n);
      const row = await store.db.selectFrom("ledger").select(["cost_nano", "note"]).where("request_id", "=", hold.requestId).executeTakeFirstOrThrow();
      expect(row).toEqual({ cost_nano: 20_000_000n, note: "shortfall_nano=10000000" });
    });

    it("expired holds are released by the sweeper; the others stay", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const short = await billing.admit(admission(accountId, keyId), { ttlMs: 1000 });
      const long = await billing.admit(admission(accountId, keyId, 100, 100), { ttlMs: 3_600_000 });
      expect(await billing.releaseExpiredHolds(clock.ms + 999)).toBe(0);
      expect(await billing.releaseExpiredHolds(clock.ms + 1000)).toBe(1);
      const state = await counters(store, accountId, keyId);
      expect(state.holds).toEqual([{ request_id: long.requestId }]);
      expect(state.account).toMatchObject({ held_nano: long.amount, held_tokens: 200n });
      expect(state.key).toMatchObject({ held_nano: long.amount, held_tokens: 200n });
      // A late settlement of the swept hold is charged without returning its reservation twice.
      await billing.settle(short, usage(100, 100), "mock");
      expect((await counters(store, accountId, keyId)).account).toMatchObject({ held_nano: long.amount, total_spent_nano: 1_250_000n });
      await billing.release(long);
    });

    it("the background sweeper runs on its interval and stops cleanly", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      await billing.admit(admission(accountId, keyId), { ttlMs: 10 });
      clock.advance(20);
      billing.startSweeper(5);
      for (let i = 0; i < 200 && (await counters(store, accountId, keyId)).holds.length > 0; i++) await new Promise((r) => setTimeout(r, 10));
      await billing.stopSweeper();
      expect((await counters(store, accountId, keyId)).account).toMatchObject({ held_nano: 0n, held_tokens: 0n });
    });

    describe("refusals (402), in the documented order, change nothing", () => {
      async function refusedWithoutChange(accountId: string, keyId: string, request: ReturnType<typeof admission>, type: string, code?: string) {
        const before = await counters(store, accountId, keyId);
        const refusal = billing.admit(request);
        await expectRefusal(refusal, type);
        if (code) await expect(refusal).rejects.toMatchObject({ details: { code } });
        expect(await counters(store, accountId, keyId)).toEqual(before);
      }

      it("account suspended or closed -> account_suspended, before anything else", async () => {
        const accountId = await makeAccount(store, { balance: 0n, monthlyBudget: 0n });
        const keyId = await makeKey(store, accountId, { budgetCap: 0n });
        await store.accounts.setStatus(accountId, "suspended");
        await refusedWithoutChange(accountId, keyId, admission(accountId, keyId), "account_suspended");
        await store.accounts.setStatus(accountId, "closed");
        await refusedWithoutChange(accountId, keyId, admission(accountId, keyId), "account_suspended");
      });

      it("monthly USD budget -> quota_exceeded until the next UTC month, checked before the balance", async () => {
        const accountId = await makeAccount(store, { balance: 20_000_000n, monthlyBudget: 10_000_000n });
        const keyId = await makeKey(store, accountId);
        const first = await billing.admit(admission(accountId, keyId));
        await billing.settle(first, usage(0, 800), "mock"); // 8,000,000 spent in January
        const refusal = billing.admit(admission(accountId, keyId));
        await expect(refusal).rejects.toThrow(/blocked until the next month begins at 2026-02-01T00:00:00\.000Z/);
        await expect(billing.admit(admission(accountId, keyId))).rejects.toThrow(
          /This month the budget is 0\.01 USD with 0\.008 USD spent, and this request needs up to 0\.0075 USD\./,
        );
        await refusedWithoutChange(accountId, keyId, admission(accountId, keyId), "quota_exceeded", "monthly_budget_exceeded");
        // Also when the balance would refuse it too: the monthly budget is reported.
        await refusedWithoutChange(accountId, keyId, admission(accountId, keyId, 0, 1300), "quota_exceeded", "monthly_budget_exceeded");
        const rollover = new StoreBilling(store.handle, { now: () => Date.UTC(2026, 1, 1, 0, 0, 0) });
        const hold = await rollover.admit(admission(accountId, keyId));
        await rollover.settle(hold, usage(0, 100), "mock");
        expect((await counters(store, accountId, keyId)).monthly.map((m) => m.month)).toEqual(["2026-01", "2026-02"]);
      });

      it("monthly token budget counts holds in flight -> quota_exceeded", async () => {
        const accountId = await makeAccount(store, { balance: USD, monthlyTokenBudget: 2000 });
        const keyId = await makeKey(store, accountId);
        const hold = await billing.admit(admission(accountId, keyId));
        await refusedWithoutChange(accountId, keyId, admission(accountId, keyId), "quota_exceeded", "monthly_budget_exceeded");
        await billing.release(hold);
        await billing.admit(admission(accountId, keyId));
      });

      it("balance below the projection (holds included) -> quota_exceeded", async () => {
        const accountId = await makeAccount(store, { balance: 10_000_000n });
        const keyId = await makeKey(store, accountId, { budgetCap: 1n });
        await refusedWithoutChange(accountId, keyId, admission(accountId, keyId, 0, 1001), "quota_exceeded", "insufficient_balance");
        const other = await makeKey(store, accountId);
        await billing.admit(admission(accountId, other));
        await refusedWithoutChange(accountId, other, admission(accountId, other), "quota_exceeded", "insufficient_balance");
      });

      it("key budget cap -> key_budget_exceeded, before the token cap", async () => {
        const accountId = await makeAccount(store, { balance: USD });
        const keyId = await makeKey(store, accountId, { budgetCap: 7_499_999n, tokenCap: 10 });
        await refusedWithoutChange(accountId, keyId, admission(accountId, keyId), "key_budget_exceeded");
        // The figures a client needs: the cap, what is spent and held, what this request needs.
        await expect(billing.admit(admission(accountId, keyId))).rejects.toThrow(
          /budget cap of 0\.007499999 USD: the key has spent 0\.00 USD and holds 0\.00 USD for requests in flight, and this request needs up to 0\.0075 USD\./,
        );
        await billing.admit(admission(accountId, keyId, 1, 0));
      });

      it("key token cap -> key_token_cap_exceeded", async () => {
        const accountId = await makeAccount(store, { balance: USD });
        const keyId = await makeKey(store, accountId, { tokenCap: 1499 });
        await refusedWithoutChange(accountId, keyId, admission(accountId, keyId), "key_token_cap_exceeded");
        await expect(billing.admit(admission(accountId, keyId))).rejects.toThrow(
          /token cap of 1499 tokens: the key has used 0 and holds 0 for requests in flight, and this request needs up to 1500\./,
        );
        await billing.admit(admission(accountId, keyId, 1000, 499));
      });

      it("a revoked key or another account's key -> auth_error", async () => {
        const accountId = await makeAccount(store, { balance: USD });
        const keyId = await makeKey(store, accountId);
        const stranger = await makeAccount(store, { balance: USD });
        await expectRefusal(billing.admit(admission(stranger, keyId)), "auth_error", 401);
        await store.keys.revoke(keyId);
        await expectRefusal(billing.admit(admission(accountId, keyId)), "auth_error", 401);
      });
    });

    it("a key reaching its cap becomes exhausted; raised caps re-enable it; lowered caps exhaust it", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId, { budgetCap: 10_000_000n });
      await billing.settle(await billing.admit(admission(accountId, keyId, 0, 500)), usage(0, 500), "mock");
      expect((await counters(store, accountId, keyId)).key.status).toBe("enabled");
      await billing.settle(await billing.admit(admission(accountId, keyId, 0, 500)), usage(0, 500), "mock");
      expect((await counters(store, accountId, keyId)).key).toMatchObject({ status: "exhausted", spent_nano: 10_000_000n });
      await expectRefusal(billing.admit(admission(accountId, keyId, 0, 0)), "key_budget_exceeded");

      const raised = await billing.setKeyCaps(keyId, { budgetCap: 20_000_000n }, accountId);
      expect(raised).toMatchObject({ status: "enabled", budgetCap: 20_000_000n });
      await billing.release(await billing.admit(admission(accountId, keyId, 0, 500)));
      const allocations = await store.db.selectFrom("key_allocations").selectAll().where("key_id", "=", keyId).orderBy("id").execute();
      expect(allocations.map((a) => [a.reason, a.budget_cap_nano, a.actor_account_id])).toEqual([
        ["created", 10_000_000n, null],
        ["caps_changed", 20_000_000n, accountId],
      ]);

      expect((await billing.setKeyCaps(keyId, { tokenCap: 1000 }, null)).status).toBe("exhausted");
      await expectRefusal(billing.admit(admission(accountId, keyId, 0, 0)), "key_token_cap_exceeded");
      expect((await billing.setKeyCaps(keyId, { tokenCap: null, budgetCap: null }, null)).status).toBe("enabled");
      await expect(billing.setKeyCaps(keyId, { budgetCap: -1n }, null)).rejects.toMatchObject({ type: "invalid_request" });
      await store.keys.revoke(keyId);
      await expect(billing.setKeyCaps(keyId, { budgetCap: USD }, null)).rejects.toMatchObject({ type: "invalid_state" });
      await expect(billing.setKeyCaps("key_missing", { budgetCap: USD }, null)).rejects.toMatchObject({ type: "not_found" });
    });

    it("a token cap reached at settlement exhausts the key with key_token_cap_exceeded", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId, { tokenCap: 1500 });
      await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 500), "mock");
      expect((await counters(store, accountId, keyId)).key).toMatchObject({ status: "exhausted", tokens_used: 1500n });
      await expectRefusal(billing.admit(admission(accountId, keyId, 0, 0)), "key_token_cap_exceeded");
    });
  });
}
