// One event per threshold crossing across TWO gateway processes sharing one database (ADR 0040): 100
// requests at once on a workspace's keys, with an account monthly budget, a workspace budget and a key
// cap each crossed part way. Every threshold the final figures reach has exactly one event, delivered
// once and signed; none that they do not reach has one.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { reachedThresholds } from "../../src/core/alert-events.js";
import { monthOf } from "../../src/core/ids.js";
import { workspaceScope } from "../../src/core/budget-scopes.js";
import { openStore } from "../../src/store/index.js";
import { killAll, startGateway as spawnGateway, waitUntilHealthy } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream } from "../support/mock-upstream.js";
import { alertsConfig, signatureValid, startReceiver, waitFor } from "./support.js";

afterAll(() => killAll());

const REQUESTS = 100;
/** Each request: 1 prompt token at $1/M and 100 output tokens at $2/M (gpt-mock) = 201,000 nano-USD. */
const COST = 201_000n;

for (const kind of DATABASE_KINDS) {
  describe(`budget threshold alerts across two processes on ${kind}`, () => {
    it("100 parallel requests: one event per threshold reached, each delivered once", { timeout: 180_000 }, async () => {
      const mock = await startMockUpstream();
      mock.handler = async (_req, res) => json(res, 200, chatCompletion("ok", { usage: { prompt_tokens: 1, completion_tokens: 100, total_tokens: 101 } }));
      const receiver = await startReceiver();
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), "gw-alert-thresholds-"));
      writeFileSync(join(dir, "gateway.config.yaml"), mockConfig({ openaiUrl: mock.url, extra: alertsConfig() }));
      const env = { ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml"), LOG_LEVEL: "warn" };
      const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      try {
        // Limits the 100 requests (about $0.0201) cross part way: account 80%, workspace 50%, a key's cap all.
        const owner = await store.accounts.create({ email: `owner-${kind}@example.com`, tier: "standard", balance: 100_000_000_000n, monthlyBudget: 18_000_000n });
        const team = await store.workspaces.create("team", owner.id);
        await store.workspaceBudgets.setPolicy(team.id, { monthlyBudget: 30_000_000n });
        const capped = await store.keys.create({ accountId: owner.id, workspaceId: team.id, budgetCap: 2_000_000n });
        const free = await store.keys.create({ accountId: owner.id, workspaceId: team.id });
        const { secret } = await store.alerts.create({
          workspaceId: null,
          url: receiver.url,
          format: "json",
          events: ["budget.threshold", "key.exhausted"],
          description: null,
          createdBy: "test",
        });

        const gateways = await Promise.all([spawnGateway(dir, env), spawnGateway(dir, env)]);
        await Promise.all(gateways.map((g) => waitUntilHealthy(g)));
        const answers = await Promise.all(
          Array.from({ length: REQUESTS }, async (_, i) => {
            const response = await fetch(`${gateways[i % 2]!.baseUrl}/v1/chat/completions`, {
              method: "POST",
              headers: { authorization: `Bearer ${(i % 4 === 0 ? capped : free).raw}`, "content-type": "application/json" },
              body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 100 }),
            });
            await response.arrayBuffer();
            return response.status;
          }),
        );
        // The capped key (a quarter of the requests) is refused once its cap cannot hold another request.
        expect(answers.filter((s) => s === 200).length).toBeGreaterThan(70);
        expect(answers.every((s) => s === 200 || s === 402)).toBe(true);

        // What the final figures reach: the events that must exist, no more.
        const month = monthOf(Date.now());
        const account = await store.db.selectFrom("monthly_usage").select("cost_nano").where("account_id", "=", owner.id).where("month", "=", month).executeTakeFirstOrThrow();
        const workspace = await store.db.selectFrom("budget_usage").select("cost_nano").where("scope", "=", workspaceScope(team.id)).executeTakeFirstOrThrow();
        const key = await store.db.selectFrom("keys").select("spent_nano").where("id", "=", capped.key.id).executeTakeFirstOrThrow();
        expect(account.cost_nano % COST).toBe(0n);
        const expected = [
          ...reachedThresholds(account.cost_nano, 18_000_000n).map((t) => `account:${owner.id}:${t}`),
          ...reachedThresholds(workspace.cost_nano, 30_000_000n).map((t) => `${workspaceScope(team.id)}:${t}`),
          ...reachedThresholds(key.spent_nano, 2_000_000n).map((t) => `key:${capped.key.id}:${t}`),
        ].sort();
        expect(expected).toEqual(expect.arrayContaining([`account:${owner.id}:50`, `account:${owner.id}:80`, `${workspaceScope(team.id)}:50`, `key:${capped.key.id}:80`]));

        const received = () => receiver.received.map((r) => ({ ...r, envelope: JSON.parse(r.body) }));
        const thresholdsOf = () =>
          received()
            .filter((r) => r.envelope.type === "budget.threshold" && r.envelope.data.unit === "USD")
            .map((r) => `${r.envelope.data.scope}:${r.envelope.data.threshold_percent}`)
            .sort();
        await waitFor("every threshold event", () => thresholdsOf().length >= expected.length, 30_000);
        // Time for a duplicate to show up, were there one.
        await new Promise((resolve) => setTimeout(resolve, 1500));
        expect(thresholdsOf()).toEqual(expected);
        const events = await store.db.selectFrom("alert_events").select(["id", "type"]).where("type", "=", "budget.threshold").execute();
        expect(events).toHaveLength(expected.length);
        expect(new Set(received().map((r) => r.envelope.id)).size).toBe(receiver.received.length);
        for (const r of receiver.received) expect(signatureValid(secret, r.headers["x-gateway-signature"] as string, r.body)).toBe(true);
        const exhausted = received().filter((r) => r.envelope.type === "key.exhausted");
        expect(exhausted).toHaveLength(key.spent_nano >= 2_000_000n ? 1 : 0);
      } finally {
        killAll();
        await store.close();
        await receiver.close();
        await mock.close();
        await database.drop();
      }
    });
  });
}
