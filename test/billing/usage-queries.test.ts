// GET /v1/me and GET /v1/usage read models: exact figures, and the ledger query plan at 200,000
// rows (BILLING_LEDGER_ROWS overrides the size) uses the (key_id, created_at) index on both databases.
import { CompiledQuery, sql } from "kysely";
import { describe, expect, it } from "vitest";
import type { StoreBilling } from "../../src/billing/billing-store.js";
import { keyUsageQuery } from "../../src/billing/usage-queries.js";
import type { Store } from "../../src/store/index.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { admission, chatModel, Clock, makeAccount, makeKey, usage, useBillingStore } from "./support.js";

const USD = 1_000_000_000n;
const DAY = 86_400_000;
const MAR_1 = Date.UTC(2026, 2, 1, 12, 0, 0);
// 200,000 rows, also under CI: a million gave the same plan and took 170 s of a slow host's CI (the
// rows pass the ledger's triggers). ledger-growth-plans.test.ts checks the plans on a realistic fill.
const LEDGER_ROWS = Number(process.env.BILLING_LEDGER_ROWS ?? 200_000);

for (const kind of DATABASE_KINDS) {
  describe(`usage queries on ${kind}`, () => {
    let store: Store;
    let billing: StoreBilling;
    const clock = new Clock(MAR_1);
    useBillingStore(kind, (f) => ({ store, billing } = f), { now: clock.now });

    it("keyUsage: totals, by model and by UTC day, within [start, end)", async () => {
      const accountId = await makeAccount(store, { balance: USD });
      const keyId = await makeKey(store, accountId);
      const other = await makeKey(store, accountId);
      const big = chatModel({ id: "big-model" });
      const charge = async (key: string, u: ReturnType<typeof usage>, model = chatModel()) =>
        billing.settle(await billing.admit({ ...admission(accountId, key), model }), u, "mock");

      await charge(keyId, usage(1000, 100, { cachedInputTokens: 400, reasoningTokens: 20 })); // 1,500,000+500,000+1,000,000
      await charge(keyId, usage(10, 10), big); // 125,000
      clock.advance(DAY);
      await charge(keyId, usage(0, 1000)); // 10,000,000
      await charge(other, usage(5000, 5000)); // another key: not counted
      clock.advance(DAY);
      await charge(keyId, usage(1, 1)); // outside the window below

      const result = await billing.keyUsage(keyId, { start: MAR_1, end: MAR_1 + 2 * DAY });
      expect(result.totals).toMatchObject({ requests: 3, inputTokens: 1010, outputTokens: 1110, cachedTokens: 400, reasoningTokens: 20, cost: 13_125_000n });
      // Per dimension: uncached input 600 + 10 tokens at 2.50/M = 1,525,000; 400 cached at 1.25/M = 500,000;
      // output 1110 at 10/M = 11,100,000; they sum to the cost. Caching saved 400 x (2.50 - 1.25)/M = 500,000.
      expect(result.totals.dimensions.input).toEqual({ count: 610n, cost: 1_525_000n });
      expect(result.totals.dimensions.cached_input).toEqual({ count: 400n, cost: 500_000n });
      expect(result.totals.dimensions.output).toEqual({ count: 1110n, cost: 11_100_000n });
      expect(result.totals.dimensions.request).toEqual({ count: 3n, cost: 0n });
      expect(result.totals.cacheSaving).toBe(500_000n);
      expect(result.byModel).toMatchObject([
        { model: "big-model", requests: 1, inputTokens: 10, outputTokens: 10, cachedTokens: 0, reasoningTokens: 0, cost: 125_000n },
        { model: "mock-chat", requests: 2, inputTokens: 1000, outputTokens: 1100, cachedTokens: 400, reasoningTokens: 20, cost: 13_000_000n },
      ]);
      expect(result.byDay.map((d) => [d.day, d.requests, d.cost])).toEqual([
        ["2026-03-01", 2, 3_125_000n],
        ["2026-03-02", 1, 10_000_000n],
      ]);
      // Defaults: the 30 days before now, which includes the last request.
      expect((await billing.keyUsage(keyId)).totals.requests).toBe(4);
      expect((await billing.keyUsage("key_none")).totals).toMatchObject({ requests: 0, cost: 0n });
      await expect(billing.keyUsage(keyId, { start: 10, end: 5 })).rejects.toMatchObject({ type: "invalid_request" });
    });

    it("accountProfile: balance, held, budgets and this UTC month's use", async () => {
      const accountId = await makeAccount(store, { balance: USD, monthlyBudget: 500_000_000n, monthlyTokenBudget: 1_000_000 });
      const keyId = await makeKey(store, accountId);
      await billing.settle(await billing.admit(admission(accountId, keyId)), usage(100, 100), "mock");
      const held = await billing.admit(admission(accountId, keyId));
      const profile = await billing.accountProfile(accountId);
      expect(profile).toMatchObject({
        accountId,
        status: "active",
        tier: "default",
        balance: USD - 1_250_000n,
        held: held.amount,
        heldTokens: 1500,
        totalSpent: 1_250_000n,
        monthlyBudget: 500_000_000n,
        monthlyTokenBudget: 1_000_000,
        month: "2026-03",
        monthSpent: 1_250_000n,
        monthTokens: 200,
        monthRequests: 1,
        monthResetsAt: "2026-04-01T00:00:00.000Z",
      });
      const fresh = await makeAccount(store);
      expect(await billing.accountProfile(fresh)).toMatchObject({ monthSpent: 0n, monthTokens: 0, monthRequests: 0, monthlyBudget: null });
      await expect(billing.accountProfile("acct_missing")).rejects.toMatchObject({ type: "not_found" });
    });

    it(`the usage query stays on the (key_id, created_at) index with ${LEDGER_ROWS} ledger rows`, { timeout: 180_000 }, async () => {
      const accountId = await makeAccount(store);
      // 1000 keys, rows spread evenly over a year: one key's month is a narrow index range.
      const base = Date.UTC(2025, 0, 1);
      const step = Math.floor((365 * DAY) / LEDGER_ROWS);
      if (kind === "sqlite") {
        await sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${LEDGER_ROWS})
          insert into ledger (created_at, account_id, key_id, request_id, kind, model, input_tokens, output_tokens, cost_nano)
          select ${base} + i * ${step}, ${accountId}, 'bulk_' || (i % 1000), 'bulk_req_' || i, 'usage', 'mock-chat', 10, 20, 1000 from n`.execute(store.db);
      } else {
        await sql`insert into ledger (created_at, account_id, key_id, request_id, kind, model, input_tokens, output_tokens, cost_nano)
          select ${base}::bigint + i * ${step}, ${accountId}, 'bulk_' || (i % 1000), 'bulk_req_' || i, 'usage', 'mock-chat', 10, 20, 1000
          from generate_series(1, ${LEDGER_ROWS}::bigint) as i`.execute(store.db);
      }
      await sql`analyze`.execute(store.db);

      const start = base + 100 * DAY;
      const compiled = keyUsageQuery("bulk_7", start, start + 30 * DAY).compile(store.db);
      const explain = store.dialect === "sqlite" ? "explain query plan " : "explain ";
      const plan = await store.db.executeQuery(CompiledQuery.raw(explain + compiled.sql, [...compiled.parameters]));
      const text = JSON.stringify(plan.rows, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
      expect(text).toMatch(/ledger_key_time/);
      expect(text).not.toMatch(/SCAN ledger(?! USING)|Seq Scan on ledger/);
      if (process.env.BILLING_SHOW_PLANS) console.log(kind, text);

      const began = performance.now();
      const result = await billing.keyUsage("bulk_7", { start, end: start + 30 * DAY });
      const elapsed = performance.now() - began;
      expect(result.totals.requests).toBeGreaterThan(0);
      // Generous bound: an indexed range of ~80 rows answers in milliseconds, a full scan would not.
      expect(elapsed).toBeLessThan(250);
    });
  });
}
