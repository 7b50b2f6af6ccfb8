// A key's periodic budget (ADR 0017) on SQLite and PostgreSQL: enforced in the admission transaction
// with its own codes, accumulated at settlement, reset at the window boundary of a clock the test
// controls, independent of the lifetime caps, never moving the key to exhausted, part of clamping's
// headroom, and untouched by a refused admission or a failed settlement.
import { sql } from "kysely";
import { describe, expect, it } from "vitest";
import { LimitRefusal } from "../../src/billing/admission.js";
import type { StoreBilling } from "../../src/billing/billing-store.js";
import type { GatewayError } from "../../src/errors/catalogue.js";
import type { Store } from "../../src/store/index.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { admission, Clock, counters, DEFAULT_PROJECTION, makeAccount, makeKey, usage, useBillingStore } from "./support.js";

const USD = 1_000_000_000n;
// Sunday 2026-03-08 23:00 UTC: an hour before a new day and a new ISO week.
const SUNDAY_LATE = Date.parse("2026-03-08T23:00:00Z");

async function periodCounters(store: Store, keyId: string) {
  return store.db
    .selectFrom("keys")
    .select(["status", "period_started_at", "period_spent_nano", "period_tokens_used", "spent_nano", "tokens_used"])
    .where("id", "=", keyId)
    .executeTakeFirstOrThrow();
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.catch((e: unknown) => e);
  expect(error).toMatchObject({ name: "GatewayError", status: 402 });
  return error as GatewayError;
}

for (const kind of DATABASE_KINDS) {
  describe(`key periodic budget on ${kind}`, () => {
    let store: Store;
    let billing: StoreBilling;
    const clock = new Clock(SUNDAY_LATE);
    useBillingStore(kind, (f) => ({ store, billing } = f), { now: clock.now });

    it("a daily USD budget refuses with its code until the next UTC day, then resets; the key stays enabled", async () => {
      clock.ms = SUNDAY_LATE;
      const accountId = await makeAccount(store, { balance: 10n * USD });
      const keyId = await makeKey(store, accountId);
      // Two default projections (7.5M nano each) fit a 16M budget; a third does not.
      await store.keys.setPolicy(keyId, { period: "day", periodBudget: 16_000_000n });
      for (let i = 0; i < 2; i++) await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 500), "mock");
      expect(await periodCounters(store, keyId)).toMatchObject({
        period_spent_nano: 15_000_000n,
        period_tokens_used: 3000n,
        period_started_at: BigInt(Date.parse("2026-03-08T00:00:00Z")),
      });

      const before = await counters(store, accountId, keyId);
      const refused = await refusal(billing.admit(admission(accountId, keyId)));
      expect(refused.type).toBe("key_budget_exceeded");
      expect(refused.details.code).toBe("key_period_budget_exceeded");
      expect(refused.message).toContain("daily budget");
      expect(refused.message).toContain("the key's policy");
      expect(refused.message).toContain("2026-03-09T00:00:00.000Z");
      // Nothing reserved or charged by the refusal, and the SPEC status did not move.
      expect(await counters(store, accountId, keyId)).toEqual(before);
      expect(before.key.status).toBe("enabled");

      clock.ms = Date.parse("2026-03-08T23:59:59.999Z");
      expect((await refusal(billing.admit(admission(accountId, keyId)))).details.code).toBe("key_period_budget_exceeded");
      clock.ms = Date.parse("2026-03-09T00:00:00Z");
      const hold = await billing.admit(admission(accountId, keyId));
      await billing.settle(hold, usage(1000, 500), "mock");
      expect(await periodCounters(store, keyId)).toMatchObject({
        status: "enabled",
        period_started_at: BigInt(Date.parse("2026-03-09T00:00:00Z")),
        period_spent_nano: DEFAULT_PROJECTION,
        period_tokens_used: 1500n,
        // The lifetime counters keep counting across periods.
        spent_nano: 3n * DEFAULT_PROJECTION,
        tokens_used: 4500n,
      });
    });

    it("a weekly token cap resets on Monday 00:00 UTC, not at midnight of another day", async () => {
      clock.ms = Date.parse("2026-03-07T12:00:00Z"); // Saturday
      const accountId = await makeAccount(store, { balance: 10n * USD });
      const keyId = await makeKey(store, accountId);
      await store.keys.setPolicy(keyId, { period: "week", periodTokenCap: 2000 });
      await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 500), "mock");
      const refused = await refusal(billing.admit(admission(accountId, keyId)));
      expect(refused.type).toBe("key_token_cap_exceeded");
      expect(refused.details.code).toBe("key_period_token_cap_exceeded");
      expect(refused.message).toContain("weekly token cap");
      expect(refused.message).toContain("2026-03-09T00:00:00.000Z");
      clock.ms = SUNDAY_LATE; // the next calendar day, same ISO week
      expect((await refusal(billing.admit(admission(accountId, keyId)))).details.code).toBe("key_period_token_cap_exceeded");
      clock.ms = Date.parse("2026-03-09T00:00:00Z");
      await billing.release(await billing.admit(admission(accountId, keyId)));
    });

    it("a monthly budget resets on the 1st; a request admitted before the reset and settled after counts in the new month", async () => {
      clock.ms = Date.parse("2026-03-31T23:59:00Z");
      const accountId = await makeAccount(store, { balance: 10n * USD });
      const keyId = await makeKey(store, accountId);
      await store.keys.setPolicy(keyId, { period: "month", periodBudget: 10_000_000n });
      await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 500), "mock");
      expect((await refusal(billing.admit(admission(accountId, keyId)))).message).toContain("monthly budget");
      clock.ms = Date.parse("2026-04-01T00:00:00Z");
      const hold = await billing.admit(admission(accountId, keyId));
      clock.ms = Date.parse("2026-04-01T00:00:01Z");
      await billing.settle(hold, usage(1000, 500), "mock");
      expect(await periodCounters(store, keyId)).toMatchObject({ period_started_at: BigInt(Date.parse("2026-04-01T00:00:00Z")), period_spent_nano: DEFAULT_PROJECTION });
    });

    it("the lifetime cap stays independent: it exhausts the key, the periodic budget never does", async () => {
      clock.ms = SUNDAY_LATE;
      const accountId = await makeAccount(store, { balance: 10n * USD });
      const keyId = await makeKey(store, accountId, { budgetCap: 15_000_000n });
      await store.keys.setPolicy(keyId, { period: "day", periodBudget: 100_000_000n });
      for (let i = 0; i < 2; i++) await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 500), "mock");
      const refused = await refusal(billing.admit(admission(accountId, keyId)));
      expect(refused.type).toBe("key_budget_exceeded");
      expect(refused.details.code).toBeUndefined();
      expect((await periodCounters(store, keyId)).status).toBe("exhausted");
      clock.ms += 86_400_000; // a new day resets the period, not the lifetime cap
      expect((await refusal(billing.admit(admission(accountId, keyId)))).details.code).toBeUndefined();
    });

    it("takes part in clamping's headroom", async () => {
      clock.ms = SUNDAY_LATE;
      const accountId = await makeAccount(store, { balance: 10n * USD });
      const keyId = await makeKey(store, accountId);
      await store.keys.setPolicy(keyId, { period: "day", periodBudget: 10_000_000n, periodTokenCap: 2500 });
      await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 500), "mock");
      const refused = await refusal(billing.admit(admission(accountId, keyId)));
      expect(refused).toBeInstanceOf(LimitRefusal);
      expect((refused as LimitRefusal).headroom).toMatchObject({ periodCost: 2_500_000n, periodTokens: 1000n, keyCost: null, keyTokens: null });
      // The day after, the counters count as 0 even before a settlement resets them.
      clock.ms += 86_400_000;
      await billing.release(await billing.admit(admission(accountId, keyId)));
    });

    it("a failure injected into the settlement transaction leaves the period counters unchanged", async () => {
      clock.ms = SUNDAY_LATE;
      const accountId = await makeAccount(store, { balance: 10n * USD });
      const keyId = await makeKey(store, accountId);
      await store.keys.setPolicy(keyId, { period: "day", periodBudget: 100_000_000n, periodTokenCap: 100_000 });
      await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 500), "mock");
      const hold = await billing.admit(admission(accountId, keyId));
      const before = await periodCounters(store, keyId);
      const id = sql.lit(accountId);
      if (store.dialect === "sqlite") {
        await sql`create trigger fail_period before update on monthly_usage when new.account_id = ${id} begin select raise(abort, 'injected failure'); end`.execute(store.db);
      } else {
        await sql`create function fail_period() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`.execute(store.db);
        await sql`create trigger fail_period before update on monthly_usage for each row when (new.account_id = ${id}) execute function fail_period()`.execute(store.db);
      }
      try {
        await expect(billing.settle(hold, usage(1000, 500), "mock")).rejects.toMatchObject({ type: "ledger_write_failed", status: 502 });
        expect(await periodCounters(store, keyId)).toEqual(before);
      } finally {
        if (store.dialect === "sqlite") await sql`drop trigger fail_period`.execute(store.db);
        else {
          await sql`drop trigger fail_period on monthly_usage`.execute(store.db);
          await sql`drop function fail_period()`.execute(store.db);
        }
      }
      await billing.settle(hold, usage(1000, 500), "mock");
      expect(await periodCounters(store, keyId)).toMatchObject({ period_spent_nano: 2n * DEFAULT_PROJECTION, period_tokens_used: 3000n });
    });

    it("changing the period starts its counters afresh", async () => {
      clock.ms = SUNDAY_LATE;
      const accountId = await makeAccount(store, { balance: 10n * USD });
      const keyId = await makeKey(store, accountId);
      await store.keys.setPolicy(keyId, { period: "day", periodBudget: 10_000_000n });
      await billing.settle(await billing.admit(admission(accountId, keyId)), usage(1000, 500), "mock");
      await refusal(billing.admit(admission(accountId, keyId)));
      await store.keys.setPolicy(keyId, { period: "week" });
      expect(await periodCounters(store, keyId)).toMatchObject({ period_spent_nano: 0n, period_started_at: 0n });
      await billing.release(await billing.admit(admission(accountId, keyId)));
    });
  });
}
