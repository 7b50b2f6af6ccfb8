// Balance escrow (ADR 0048) across TWO gateway processes on one PostgreSQL, GATEWAY_BALANCE_ESCROW=1:
// 200 parallel requests on one account against a balance for 30 are exactly 30 admitted, never
// overdrawn, the ledger equal to the balance change; the slices go back at shutdown (SIGTERM), and
// a SIGKILLed process's slice goes back by the sweeper once its lease ran out. PostgreSQL only.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { StoreBilling } from "../../src/billing/billing-store.js";
import { openStore, type Store } from "../../src/store/index.js";
import { killAll, startGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream } from "../support/mock-upstream.js";

afterAll(() => killAll());

function chat(gateway: GatewayProcess, raw: string): Promise<Response> {
  return fetch(`${gateway.baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 100 }),
  });
}

async function account(store: Store, id: string) {
  return store.db.selectFrom("accounts").select(["balance_nano", "held_nano"]).where("id", "=", id).executeTakeFirstOrThrow();
}

async function slices(store: Store, id: string) {
  return store.db.selectFrom("account_escrows").selectAll().where("account_id", "=", id).execute();
}

async function usageSum(store: Store, id: string): Promise<bigint> {
  const rows = await store.db.selectFrom("ledger").select("cost_nano").where("account_id", "=", id).where("kind", "=", "usage").execute();
  return rows.reduce((sum, row) => sum + row.cost_nano, 0n);
}

for (const kind of DATABASE_KINDS) {
  if (kind !== "postgres") continue;
  describe("balance escrow across two gateway processes on PostgreSQL", () => {
    it("200 parallel requests against a balance for 30: exactly 30, never overdrawn; slices back at SIGTERM and after a SIGKILL's lease", { timeout: 240_000 }, async () => {
      const mock = await startMockUpstream();
      // Answers wait for the test to open the gate, so every admitted request holds its hold at once.
      let gateOpen = true;
      const gates: Array<() => void> = [];
      let arrived = 0;
      mock.handler = async (_req, res) => {
        arrived += 1;
        if (!gateOpen) await new Promise<void>((resolve) => gates.push(resolve));
        json(res, 200, chatCompletion("ok", { usage: { prompt_tokens: 4, completion_tokens: 50, total_tokens: 54 } }));
      };
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), "gw-escrow-"));
      const configPath = join(dir, "gateway.config.yaml");
      writeFileSync(configPath, mockConfig({ openaiUrl: mock.url }));
      const env = { ...database.env, GATEWAY_CONFIG: configPath, LOG_LEVEL: "warn", GATEWAY_BALANCE_ESCROW: "1" };
      const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      const owner = await store.accounts.create({ email: "escrow@example.com", tier: "standard", balance: 100_000_000_000n });
      const key = await store.keys.create({ accountId: owner.id });
      // A capped key of the same account is admitted centrally: its hold row tells one request's hold.
      const probe = await store.keys.create({ accountId: owner.id, budgetCap: 50_000_000_000n });
      try {
        const gateways = await Promise.all([startGateway(dir, env), startGateway(dir, env)]);
        await Promise.all(gateways.map((g) => waitUntilHealthy(g)));
        // Warm-up: each process learns the account and key are plain and takes a slice.
        await Promise.all(
          gateways.map(async (gateway) => {
            for (let i = 0; i < 3; i++) expect((await chat(gateway, key.raw)).status).toBe(200);
          }),
        );
        await waitFor(
          async () => (await slices(store, owner.id)).length === 2,
          10_000,
          () => "two slices",
        );
        gateOpen = false;
        const probing = chat(gateways[0], probe.raw);
        const probeHolds = () => store.db.selectFrom("holds").select("amount_nano").where("key_id", "=", probe.key.id).execute();
        await waitFor(
          async () => (await probeHolds()).length === 1,
          10_000,
          () => "the probe's hold",
        );
        const hold = (await probeHolds())[0]!.amount_nano;
        gates.splice(0).forEach((open) => open());
        expect((await probing).status).toBe(200);

        // Leave available (balance - held, the slices counted as held) what 30 holds need, and less than one more.
        const before = await account(store, owner.id);
        await store.accounts.adjustBalance(owner.id, -(before.balance_nano - before.held_nano - (30n * hold + hold / 2n)), "test");
        const start = await account(store, owner.id);
        const usageBefore = await usageSum(store, owner.id);
        const arrivedBefore = arrived;
        const responses = Array.from({ length: 200 }, (_, i) => chat(gateways[i % 2]!, key.raw));
        const statuses: number[] = [];
        const settled = responses.map((r) => r.then((response) => (statuses.push(response.status), response.arrayBuffer())));
        await waitFor(
          () => statuses.length === 170 && arrived - arrivedBefore === 30,
          30_000,
          () => `${statuses.length} answered, ${arrived - arrivedBefore} at the mock`,
        );
        const during = await account(store, owner.id);
        expect(during.balance_nano).toBeGreaterThanOrEqual(during.held_nano);
        gateOpen = true;
        gates.splice(0).forEach((open) => open());
        await Promise.all(settled);
        expect(statuses.filter((s) => s === 200)).toHaveLength(30);
        expect(statuses.filter((s) => s === 402)).toHaveLength(170);
        const end = await account(store, owner.id);
        expect(end.balance_nano).toBeGreaterThanOrEqual(0n);
        expect(start.balance_nano - end.balance_nano).toBe((await usageSum(store, owner.id)) - usageBefore);

        // SIGTERM: each process gives its slice back before it exits.
        gateways[0].child.kill("SIGTERM");
        expect((await gateways[0].exited(30_000)).code).toBe(0);
        expect((await slices(store, owner.id)).length).toBeLessThanOrEqual(1);
        // SIGKILL after taking a slice: it stays until its lease ran out, then the sweeper gives it back.
        await store.accounts.adjustBalance(owner.id, 10_000_000_000n, "test");
        for (let i = 0; i < 3; i++) expect((await chat(gateways[1], key.raw)).status).toBe(200);
        await waitFor(
          async () => (await slices(store, owner.id)).length === 1,
          10_000,
          () => "one slice",
        );
        gateways[1].child.kill("SIGKILL");
        await gateways[1].exited(10_000);
        const [left] = await slices(store, owner.id);
        const sweeper = new StoreBilling(store.handle);
        await sweeper.releaseExpiredHolds(Date.now());
        expect(await slices(store, owner.id)).toHaveLength(1);
        await sweeper.releaseExpiredHolds(Number(left!.expires_at) + 1);
        expect(await slices(store, owner.id)).toEqual([]);
        expect((await account(store, owner.id)).held_nano).toBe(0n);
      } finally {
        killAll();
        await store.close();
        await mock.close();
        await database.drop();
      }
    });
  });
}
