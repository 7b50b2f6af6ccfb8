// A refusal by a money or token limit carries what every limit still allows (Headroom), read under
// the admission's own locks, identically on SQLite and PostgreSQL; none when the account or the key
// turned clamping off, and none for the other refusals. A refusal still changes nothing.
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { LimitRefusal } from "../../src/billing/admission.js";
import type { StoreBilling } from "../../src/billing/billing-store.js";
import type { Store } from "../../src/store/index.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { admission, counters, DEFAULT_PROJECTION, makeAccount, makeKey, usage, useBillingStore } from "./support.js";

for (const kind of DATABASE_KINDS) {
  describe(`admission headroom on ${kind}`, () => {
    let store: Store;
    let billing: StoreBilling;
    useBillingStore(kind, (fixture) => ({ store, billing } = fixture));

    async function refusal(promise: Promise<unknown>): Promise<LimitRefusal> {
      const error = await promise.catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LimitRefusal);
      return error as LimitRefusal;
    }

    it("reports every limit with holds and the month's settled use deducted", async () => {
      const accountId = await makeAccount(store, { balance: 100_000_000n, monthlyBudget: 60_000_000n, monthlyTokenBudget: 50_000 });
      const keyId = await makeKey(store, accountId, { budgetCap: 40_000_000n, tokenCap: 30_000 });
      // Settled: 1000 in + 500 out = 7.5M nano, 1500 tokens. Held: another 7.5M nano, 1500 tokens.
      await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 500), "mock");
      const held = await billing.admit(admission(accountId, keyId));
      const before = await counters(store, accountId, keyId);

      const refused = await refusal(billing.admit(admission(accountId, keyId, 1000, 16_000)));
      // The monthly budget is checked first and refuses; the headroom still names every limit.
      expect(refused.details.code).toBe("monthly_budget_exceeded");
      expect(refused.headroom).toEqual({
        balance: 100_000_000n - DEFAULT_PROJECTION - DEFAULT_PROJECTION,
        monthCost: 60_000_000n - DEFAULT_PROJECTION - DEFAULT_PROJECTION,
        monthTokens: 50_000n - 1_500n - 1_500n,
        keyCost: 40_000_000n - DEFAULT_PROJECTION - DEFAULT_PROJECTION,
        keyTokens: 30_000n - 1_500n - 1_500n,
        periodCost: null,
        periodTokens: null,
        budgetCost: null,
        budgetTokens: null,
      });
      expect(await counters(store, accountId, keyId)).toEqual(before);
      await billing.release(held);
    });

    it("each clampable refusal carries it; limits that are not set are null", async () => {
      const poor = await makeAccount(store, { balance: 1_000_000n });
      const poorKey = await makeKey(store, poor);
      const balance = await refusal(billing.admit(admission(poor, poorKey)));
      expect(balance.details.code).toBe("insufficient_balance");
      expect(balance.headroom).toEqual({
        balance: 1_000_000n,
        monthCost: null,
        monthTokens: null,
        keyCost: null,
        keyTokens: null,
        periodCost: null,
        periodTokens: null,
        budgetCost: null,
        budgetTokens: null,
      });

      const budgeted = await makeAccount(store, { balance: 100_000_000n, monthlyTokenBudget: 1_000 });
      const budgetedKey = await makeKey(store, budgeted, { tokenCap: 900 });
      const month = await refusal(billing.admit(admission(budgeted, budgetedKey)));
      expect(month.details.code).toBe("monthly_budget_exceeded");
      expect(month.headroom).toMatchObject({ monthTokens: 1_000n, keyTokens: 900n, monthCost: null, keyCost: null });

      const capped = await makeAccount(store, { balance: 100_000_000n });
      const cappedKey = await makeKey(store, capped, { tokenCap: 1_200 });
      const tokens = await refusal(billing.admit(admission(capped, cappedKey)));
      expect(tokens.type).toBe("key_token_cap_exceeded");
      expect(tokens.headroom).toMatchObject({ keyTokens: 1_200n, balance: 100_000_000n });
    });

    it("no headroom when the account or the key turned clamping off; a clamped admission then fits", async () => {
      const accountId = await makeAccount(store, { balance: 1_000_000n });
      const keyId = await makeKey(store, accountId);
      await store.accounts.update(accountId, { clampOutput: false });
      expect((await refusal(billing.admit(admission(accountId, keyId)))).headroom).toBeNull();
      await store.accounts.update(accountId, { clampOutput: true });
      await store.keys.setClampOutput(keyId, false);
      expect((await refusal(billing.admit(admission(accountId, keyId)))).headroom).toBeNull();
      await store.keys.setClampOutput(keyId, true);
      const refused = await refusal(billing.admit(admission(accountId, keyId)));
      expect(refused.headroom?.balance).toBe(1_000_000n);
      // 1000 in = 2.5M nano already: the prompt alone does not fit; 100 in + 75 out = 1M exactly does.
      const hold = await billing.admit(admission(accountId, keyId, 100, 75));
      expect(hold.amount).toBe(1_000_000n);
      await billing.release(hold);
    });

    it("other refusals are not clampable", async () => {
      const accountId = await makeAccount(store, { balance: 100_000_000n });
      const keyId = await makeKey(store, accountId);
      await store.accounts.setStatus(accountId, "suspended");
      const error = await billing.admit(admission(accountId, keyId)).catch((e: unknown) => e);
      expect(error).toMatchObject({ type: "account_suspended" });
      expect(error).not.toBeInstanceOf(LimitRefusal);
    });

    it("changing a key's setting is one transaction: a failure in its auth event leaves the key as it was", async () => {
      const accountId = await makeAccount(store, { balance: 1_000_000n });
      const keyId = await makeKey(store, accountId);
      if (store.dialect === "sqlite") {
        await sql`create trigger fail_auth_events before insert on auth_events begin select raise(abort, 'injected failure'); end`.execute(store.db);
      } else {
        await sql`create function fail_auth_events() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`.execute(store.db);
        await sql`create trigger fail_auth_events before insert on auth_events for each row execute function fail_auth_events()`.execute(store.db);
      }
      try {
        await expect(store.keys.setClampOutput(keyId, false)).rejects.toThrow(/injected failure/);
        expect((await store.keys.get(keyId))!.clampOutput).toBe(true);
      } finally {
        if (store.dialect === "sqlite") await sql`drop trigger fail_auth_events`.execute(store.db);
        else {
          await sql`drop trigger fail_auth_events on auth_events`.execute(store.db);
          await sql`drop function fail_auth_events()`.execute(store.db);
        }
      }
      expect((await store.keys.setClampOutput(keyId, false)).clampOutput).toBe(false);
    });
  });
}
