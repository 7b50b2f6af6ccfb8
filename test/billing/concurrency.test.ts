// 200 concurrent admit -> settle cycles against a balance and key caps that cover only some of them.
// On PostgreSQL two Store instances (two pools: stand-ins for two gateway processes) share the
// database and split the requests. Afterwards every counter must agree with the ledger exactly.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { GatewayError } from "../../src/errors/catalogue.js";
import type { Store } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { admission, makeAccount, makeKey, openTestStore, usage } from "./support.js";

const REQUESTS = 200;
const START_BALANCE = 400_000_000n; // $0.40: about 60 requests' worth
const REFUSALS = new Set(["quota_exceeded", "key_budget_exceeded", "key_token_cap_exceeded"]);

/** Deterministic pseudo-random numbers, so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

for (const kind of DATABASE_KINDS) {
  describe(`billing concurrency on ${kind}`, () => {
    let database: TestDatabase;
    const stores: Store[] = [];

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      stores.push(await openTestStore(database));
      // SQLite serves one process here: two connections in one Node process would block each other's
      // event loop in better-sqlite3's synchronous busy wait. PostgreSQL gets a second "process".
      if (kind === "postgres") stores.push(await openTestStore(database, false));
    });
    afterAll(async () => {
      for (const store of stores) await store.close();
      await database?.drop();
    });

    it("never overspends and charges each admitted request exactly once", async () => {
      const [first] = stores as [Store];
      const accountId = await makeAccount(first, { balance: START_BALANCE });
      const keys = [
        { id: await makeKey(first, accountId, { budgetCap: 60_000_000n }), budgetCap: 60_000_000n, tokenCap: null },
        { id: await makeKey(first, accountId, { tokenCap: 6_000 }), budgetCap: null, tokenCap: 6_000n },
        { id: await makeKey(first, accountId, { budgetCap: 90_000_000n, tokenCap: 30_000 }), budgetCap: 90_000_000n, tokenCap: 30_000n },
        { id: await makeKey(first, accountId), budgetCap: null, tokenCap: null },
      ];
      // Each capped key's first BURST requests arrive together, before any other: their holds alone
      // pass the key's cap (5 x 12.5M > 60M, 4 x 2,000 > 6,000 tokens, 8 x 12.5M > 90M) while the
      // account holds at most 14 projections of its 32. So every refusal type occurs however slow the
      // host: with spread arrivals alone, an account fully held by slow settlements refused the
      // token-capped key's requests first (quota_exceeded) on a loaded CI host.
      const BURST = 8;
      const billings = stores.map((store) => new StoreBilling(store.handle));
      const next = random(42);

      type Outcome = { requestId: string; result: "charged" | "released" | "refused"; type?: string; cost?: bigint; processIndex: number };
      const outcomes = await Promise.all(
        Array.from({ length: REQUESTS }, async (_, i): Promise<Outcome> => {
          const processIndex = i % billings.length;
          const billing = billings[processIndex]!;
          const key = keys[i % keys.length]!;
          // Projection: 1000 input + 1000 output = 12,500,000 nano; the actual use is at most that.
          const request = admission(accountId, key.id, 1000, 1000);
          const actual = usage(200 + Math.floor(next() * 800), 100 + Math.floor(next() * 900));
          const capped = key.budgetCap !== null || key.tokenCap !== null;
          // 0 ms and 2+ ms: the burst's timers fire in one turn of the event loop, before any other.
          const start = capped && i < BURST * keys.length ? 0 : 2 + Math.floor(next() * 150);
          const delay = Math.floor(next() * 5);
          const releaseInstead = i % 10 === 9;
          await sleep(start); // arrivals spread out, so admissions and settlements interleave
          try {
            const hold = await billing.admit(request);
            await sleep(delay); // the upstream call
            if (releaseInstead) {
              await billing.release(hold);
              return { requestId: request.requestId, result: "released", processIndex };
            }
            const charge = await billing.settle(hold, actual, "mock");
            expect(charge.recorded).toBe(true);
            return { requestId: request.requestId, result: "charged", cost: charge.cost, processIndex };
          } catch (error) {
            if (error instanceof GatewayError && error.status === 402 && REFUSALS.has(error.type)) {
              return { requestId: request.requestId, result: "refused", type: error.type, processIndex };
            }
            throw error;
          }
        }),
      );

      const charged = outcomes.filter((o) => o.result === "charged");
      const refused = outcomes.filter((o) => o.result === "refused");
      // The limits covered only some of the requests.
      expect(charged.length).toBeGreaterThan(0);
      expect(refused.length).toBeGreaterThan(0);
      expect(new Set(refused.map((o) => o.type))).toEqual(new Set(REFUSALS));
      if (billings.length > 1) expect(new Set(charged.map((o) => o.processIndex)).size).toBe(2);

      const db = first.db;
      const account = await db.selectFrom("accounts").selectAll().where("id", "=", accountId).executeTakeFirstOrThrow();
      const keyRows = await db.selectFrom("keys").selectAll().where("account_id", "=", accountId).execute();
      const ledger = await db.selectFrom("ledger").select(["request_id", "cost_nano", "note"]).where("account_id", "=", accountId).where("kind", "=", "usage").execute();
      // The starting balance is the account's one credit row.
      const credits = await db.selectFrom("ledger").select(["cost_nano"]).where("account_id", "=", accountId).where("kind", "!=", "usage").execute();
      expect(credits).toEqual([{ cost_nano: START_BALANCE }]);
      const monthly = await db.selectFrom("monthly_usage").selectAll().where("account_id", "=", accountId).execute();
      const holds = await db.selectFrom("holds").select("id").where("account_id", "=", accountId).execute();

      // Each charged request has exactly one ledger row, at its cost; nothing else has one.
      expect(ledger.map((r) => r.request_id).sort()).toEqual(charged.map((o) => o.requestId).sort());
      const costs = new Map(ledger.map((r) => [r.request_id, r.cost_nano]));
      for (const o of charged) expect(costs.get(o.requestId)).toBe(o.cost);
      expect(ledger.every((r) => r.note === null)).toBe(true);

      const ledgerSum = ledger.reduce((sum, r) => sum + r.cost_nano, 0n);
      const keySpent = keyRows.reduce((sum, k) => sum + k.spent_nano, 0n);
      expect(account.total_spent_nano).toBe(ledgerSum);
      expect(START_BALANCE - account.balance_nano).toBe(ledgerSum);
      expect(keySpent).toBe(ledgerSum);
      expect(monthly.reduce((sum, m) => sum + m.cost_nano, 0n)).toBe(ledgerSum);
      expect(monthly.reduce((sum, m) => sum + m.requests, 0n)).toBe(BigInt(charged.length));

      expect(account.balance_nano >= 0n).toBe(true);
      expect(account.held_nano).toBe(0n);
      expect(account.held_tokens).toBe(0n);
      expect(holds).toEqual([]);
      for (const key of keys) {
        const row = keyRows.find((k) => k.id === key.id)!;
        expect(row.held_nano).toBe(0n);
        expect(row.held_tokens).toBe(0n);
        if (key.budgetCap !== null) expect(row.spent_nano <= key.budgetCap).toBe(true);
        if (key.tokenCap !== null) expect(row.tokens_used <= key.tokenCap).toBe(true);
      }
    });
  });
}
