// Workspace and member budgets in the admission transaction (core/budget-scopes.ts, ADR 0037), on both
// databases: exact under concurrent admissions from the keys of several members, a budget equal to the
// spend refusing (even a request projected at 0), the member budget with its own code, settlement
// moving the hold to the month's spend, release and the sweeper giving it back, the month rolling over,
// and the headroom a refusal reports for clamping.
import { describe, expect, it } from "vitest";
import type { StoreBilling } from "../../src/billing/billing-store.js";
import { budgetLimitsOf, memberScope, workspaceScope, type WorkspacePolicy } from "../../src/core/budget-scopes.js";
import { GatewayError } from "../../src/errors/catalogue.js";
import { LimitRefusal } from "../../src/billing/admission.js";
import type { Hold } from "../../src/billing/types.js";
import type { Store } from "../../src/store/index.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { admission, chatModel, Clock, DEFAULT_PROJECTION, makeAccount, makeKey, usage, useBillingStore } from "./support.js";

const USD = 1_000_000_000n;
const P = DEFAULT_PROJECTION;

function policy(id: string, figures: Partial<WorkspacePolicy> = {}): WorkspacePolicy {
  return { id, name: id, monthlyBudget: null, monthlyTokenBudget: null, memberMonthlyBudget: null, allowedModels: null, guardrails: [], ...figures };
}

async function scopeRow(store: Store, scope: string) {
  return store.db.selectFrom("budget_usage").selectAll().where("scope", "=", scope).executeTakeFirst();
}

async function settleAll(promises: Promise<Hold>[]): Promise<{ admitted: Hold[]; refused: GatewayError[] }> {
  const admitted: Hold[] = [];
  const refused: GatewayError[] = [];
  for (const r of await Promise.allSettled(promises)) {
    if (r.status === "fulfilled") admitted.push(r.value);
    else if (r.reason instanceof GatewayError) refused.push(r.reason);
    else throw r.reason;
  }
  return { admitted, refused };
}

for (const kind of DATABASE_KINDS) {
  describe(`workspace and member budgets on ${kind}`, () => {
    const clock = new Clock(Date.UTC(2026, 0, 31, 23, 0, 0));
    let store: Store;
    let billing: StoreBilling;
    useBillingStore(kind, (f) => ({ store, billing } = f), { now: clock.now });

    /** Two members with a key each, with ample balances (the workspace is the budgets passed to admit). */
    async function members() {
      const a = await makeAccount(store, { balance: USD });
      const b = await makeAccount(store, { balance: USD });
      return [
        { accountId: a, keyId: await makeKey(store, a) },
        { accountId: b, keyId: await makeKey(store, b) },
      ];
    }

    it("200 concurrent admissions from two members' keys against a budget for 30: exactly 30 held, settled exactly, then the equal spend refuses", async () => {
      const ws = policy("ws_exact", { monthlyBudget: 30n * P });
      const people = await members();
      const requests = Array.from({ length: 200 }, (_, i) => {
        const who = people[i % 2]!;
        return billing.admit(admission(who.accountId, who.keyId, 1000, 500, { budgets: budgetLimitsOf(ws, who.accountId) }));
      });
      const { admitted, refused } = await settleAll(requests);
      expect(admitted).toHaveLength(30);
      expect(refused).toHaveLength(170);
      expect(refused.every((e) => e.type === "workspace_budget_exceeded" && e.status === 402 && e.details.code === "workspace_budget_exceeded")).toBe(true);
      expect(await scopeRow(store, workspaceScope(ws.id))).toMatchObject({ held_nano: 30n * P, held_tokens: 30n * 1500n, cost_nano: 0n });
      expect(admitted.every((h) => h.budgets?.[0] === workspaceScope(ws.id))).toBe(true);

      await Promise.all(admitted.map((h) => billing.settle(h, usage(1000, 500), "mock")));
      expect(await scopeRow(store, workspaceScope(ws.id))).toMatchObject({ month: "2026-01", cost_nano: 30n * P, tokens: 30n * 1500n, held_nano: 0n, held_tokens: 0n });
      // Each member's share, and the accounts charged exactly the same served requests.
      const perMember = await Promise.all(people.map((p) => scopeRow(store, memberScope(ws.id, p.accountId))));
      expect(perMember.reduce((sum, row) => sum + (row?.cost_nano ?? 0n), 0n)).toBe(30n * P);
      const ledger = await store.db
        .selectFrom("ledger")
        .select((eb) => eb.fn.sum<bigint>("cost_nano").as("cost"))
        .where("kind", "=", "usage")
        .where(
          "key_id",
          "in",
          people.map((p) => p.keyId),
        )
        .executeTakeFirstOrThrow();
      expect(BigInt(ledger.cost)).toBe(30n * P);

      // Spend equal to the budget refuses, even a request projected at 0 (no `>` versus `>=` slip).
      const free = chatModel({
        pricing: { ...chatModel().pricing, inputPerMtok: 0n, outputPerMtok: 0n, cachedInputPerMtok: 0n, cacheWrite5mPerMtok: 0n, cacheWrite1hPerMtok: 0n },
      });
      const who = people[0]!;
      const zero = billing.admit(admission(who.accountId, who.keyId, 10, 10, { model: free, budgets: budgetLimitsOf(ws, who.accountId) }));
      await expect(zero).rejects.toMatchObject({ type: "workspace_budget_exceeded" });
      await expect(billing.admit(admission(who.accountId, who.keyId, 1000, 500, { budgets: budgetLimitsOf(ws, who.accountId) }))).rejects.toThrow(
        /workspace's monthly budget\. In 2026-01 \(UTC\) the budget is 0\.225 USD with 0\.225 USD spent and 0\.00 USD held for requests in flight, and this request needs up to 0\.0075 USD\. It resets at 2026-02-01T00:00:00\.000Z\./,
      );
    });

    it("the member budget refuses with its own code, the other member goes on; a release gives the hold back", async () => {
      const ws = policy("ws_member", { memberMonthlyBudget: 2n * P });
      const [alice, bob] = await members();
      const admitAs = (p: { accountId: string; keyId: string }) => billing.admit(admission(p.accountId, p.keyId, 1000, 500, { budgets: budgetLimitsOf(ws, p.accountId) }));
      const first = await admitAs(alice!);
      await admitAs(alice!);
      await expect(admitAs(alice!)).rejects.toMatchObject({ type: "member_budget_exceeded", status: 402, details: { code: "member_budget_exceeded" } });
      const refusedAccount = await store.db.selectFrom("accounts").select("held_nano").where("id", "=", alice!.accountId).executeTakeFirstOrThrow();
      expect(refusedAccount.held_nano).toBe(2n * P);
      await admitAs(bob!);
      await billing.release(first);
      expect(await scopeRow(store, memberScope(ws.id, alice!.accountId))).toMatchObject({ held_nano: P, cost_nano: 0n });
      expect(await scopeRow(store, workspaceScope(ws.id))).toMatchObject({ held_nano: 2n * P });
      await admitAs(alice!);
    });

    it("a token budget, the headroom for clamping, and the sweeper giving back an expired hold", async () => {
      const ws = policy("ws_tokens", { monthlyTokenBudget: 2000n });
      const [alice] = await members();
      const budgets = budgetLimitsOf(ws, alice!.accountId);
      const held = await billing.admit(admission(alice!.accountId, alice!.keyId, 1000, 500, { budgets }));
      const refusal = await billing.admit(admission(alice!.accountId, alice!.keyId, 1000, 500, { budgets })).catch((e: unknown) => e);
      expect(refusal).toBeInstanceOf(LimitRefusal);
      expect((refusal as LimitRefusal).headroom).toMatchObject({ budgetTokens: 500n, budgetCost: null });
      clock.advance(16 * 60_000);
      expect(await billing.releaseExpiredHolds()).toBeGreaterThanOrEqual(1);
      expect(await scopeRow(store, workspaceScope(ws.id))).toMatchObject({ held_nano: 0n, held_tokens: 0n });
      await billing.release(held); // already swept: nothing more is given back
      expect(await scopeRow(store, workspaceScope(ws.id))).toMatchObject({ held_nano: 0n, held_tokens: 0n });
    });

    it("the month rolling over resets the budget", async () => {
      clock.ms = Date.UTC(2026, 2, 31, 23, 0, 0);
      const ws = policy("ws_month", { monthlyBudget: P });
      const [alice] = await members();
      const budgets = budgetLimitsOf(ws, alice!.accountId);
      const hold = await billing.admit(admission(alice!.accountId, alice!.keyId, 1000, 500, { budgets }));
      await billing.settle(hold, usage(1000, 500), "mock");
      await expect(billing.admit(admission(alice!.accountId, alice!.keyId, 1000, 500, { budgets }))).rejects.toMatchObject({ type: "workspace_budget_exceeded" });
      clock.ms = Date.UTC(2026, 3, 1, 0, 0, 1);
      const next = await billing.admit(admission(alice!.accountId, alice!.keyId, 1000, 500, { budgets }));
      await billing.settle(next, usage(1000, 500), "mock");
      expect(await scopeRow(store, workspaceScope(ws.id))).toMatchObject({ month: "2026-04", cost_nano: P, held_nano: 0n });
    });
  });
}
