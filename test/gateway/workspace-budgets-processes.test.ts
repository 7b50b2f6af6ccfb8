// A workspace budget and a tag budget are exact across TWO gateway processes sharing one database
// (SQLite file or PostgreSQL): 200 requests at once on the keys of two members of one workspace, all
// tagged cc=platform (the keys' default tag), against a workspace budget for 30 of them, then against a
// budget on the tag for 30 of them. Never over, and exactly the served requests charged to the
// workspace, to each member, to the tag (its budget and ledger_tags) and to the accounts.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseUsd } from "../../src/core/money.js";
import { memberScope, workspaceScope } from "../../src/core/budget-scopes.js";
import { tagScope } from "../../src/core/request-tags.js";
import { openStore } from "../../src/store/index.js";
import { killAll, startGateway as spawnGateway, waitUntilHealthy, type GatewayProcess } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream } from "../support/mock-upstream.js";

afterAll(() => killAll());

const REQUESTS = 200;
/** gpt-mock's prices (mockConfig): input $1 and output $2 per million tokens, in nano-USD per token. */
const INPUT_NANO = 1000n;
const OUTPUT_NANO = 2000n;
const MAX_TOKENS = 100;

async function chat(gateway: GatewayProcess, raw: string): Promise<{ status: number; code: string | undefined; message: string | undefined }> {
  const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: MAX_TOKENS }),
  });
  const body = (await response.json()) as { error?: { code?: string; message: string } };
  return { status: response.status, code: body.error?.code, message: body.error?.message };
}

const TAG = "cc=platform";

for (const kind of DATABASE_KINDS) {
  describe.each(["workspace", "tag"] as const)(`a %s budget across two gateway processes on ${kind}`, (binding) => {
    const code = binding === "workspace" ? "workspace_budget_exceeded" : "tag_budget_exceeded";
    it("200 parallel requests on two members' tagged keys, a budget for 30: exactly 30 served and charged", { timeout: 180_000 }, async () => {
      const mock = await startMockUpstream();
      let usage = { prompt_tokens: 1, completion_tokens: MAX_TOKENS, total_tokens: MAX_TOKENS + 1 };
      mock.handler = async (_req, res) => json(res, 200, chatCompletion("ok", { usage }));
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), "gw-ws-budget-"));
      writeFileSync(join(dir, "gateway.config.yaml"), mockConfig({ openaiUrl: mock.url }));
      const env = { ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml"), LOG_LEVEL: "warn" };
      const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      const alice = await store.accounts.create({ email: `alice-${kind}@example.com`, tier: "standard", balance: 100_000_000_000n });
      const bob = await store.accounts.create({ email: `bob-${kind}@example.com`, tier: "standard", balance: 100_000_000_000n });
      const team = await store.workspaces.create("team", alice.id);
      await store.workspaces.addMember(team.id, bob.id, "member");
      // A probe workspace with a budget of 0 tells the projection P of one request (its refusal names it).
      const probe = await store.workspaces.create("probe", alice.id);
      await store.workspaceBudgets.setPolicy(probe.id, { monthlyBudget: 0n });
      const probeKey = await store.keys.create({ accountId: alice.id, workspaceId: probe.id });
      const policy = { defaultTags: { cc: "platform" } };
      const keys = [
        await store.keys.create({ accountId: alice.id, workspaceId: team.id, policy }),
        await store.keys.create({ accountId: alice.id, workspaceId: team.id, policy }),
        await store.keys.create({ accountId: bob.id, workspaceId: team.id, policy }),
        await store.keys.create({ accountId: bob.id, workspaceId: team.id, policy }),
      ];
      // The tag's budget, read by each process at start; raised to its real figure below.
      await store.tagBudgets.set(TAG, null, 1n << 60n, null, Date.now());
      try {
        const gateways = await Promise.all([spawnGateway(dir, env), spawnGateway(dir, env)]);
        await Promise.all(gateways.map((g) => waitUntilHealthy(g)));

        const refused = await chat(gateways[0], probeKey.raw);
        expect(refused).toMatchObject({ status: 402, code: "workspace_budget_exceeded" });
        const projection = parseUsd(/this request needs up to ([\d.]+) USD/.exec(refused.message ?? "")![1]!)!;
        // The hold prices the prompt estimate at the input price plus max_tokens at the output price:
        // the mock reports exactly those tokens, so each settlement costs exactly its hold.
        const promptTokens = (projection - BigInt(MAX_TOKENS) * OUTPUT_NANO) / INPUT_NANO;
        expect(promptTokens * INPUT_NANO + BigInt(MAX_TOKENS) * OUTPUT_NANO).toBe(projection);
        usage = { prompt_tokens: Number(promptTokens), completion_tokens: MAX_TOKENS, total_tokens: Number(promptTokens) + MAX_TOKENS };
        // Set before the team's keys are first used, so no process has them cached.
        const budget = 30n * projection + projection / 2n;
        await store.workspaceBudgets.setPolicy(team.id, { monthlyBudget: binding === "workspace" ? budget : 1000n * projection });
        if (binding === "tag") {
          await store.tagBudgets.set(TAG, null, budget, null, Date.now());
          // Each process reads the tag budgets on its auth cache's poll (every 500 ms).
          await new Promise((resolve) => setTimeout(resolve, 1500));
        }

        const answers = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => chat(gateways[i % 2]!, keys[i % keys.length]!.raw)));
        const served = answers.filter((a) => a.status === 200);
        expect(served).toHaveLength(30);
        expect(answers.filter((a) => a.status !== 200).every((a) => a.status === 402 && a.code === code)).toBe(true);

        const scope = await store.db.selectFrom("budget_usage").selectAll().where("scope", "=", workspaceScope(team.id)).executeTakeFirstOrThrow();
        expect(scope).toMatchObject({ cost_nano: 30n * projection, held_nano: 0n, held_tokens: 0n });
        expect(scope.cost_nano).toBeLessThanOrEqual(budget);
        // The tag: its budget's counters and its ledger_tags rows hold exactly the served requests.
        const tagged = await store.db.selectFrom("budget_usage").selectAll().where("scope", "=", tagScope(TAG, null)).executeTakeFirstOrThrow();
        expect(tagged).toMatchObject({ cost_nano: 30n * projection, held_nano: 0n, held_tokens: 0n });
        const tagRows = await store.db.selectFrom("ledger_tags").select(["cost_nano"]).where("tag", "=", TAG).execute();
        expect(tagRows).toHaveLength(30);
        expect(tagRows.reduce((sum, row) => sum + row.cost_nano, 0n)).toBe(30n * projection);
        const members = await store.db
          .selectFrom("budget_usage")
          .selectAll()
          .where("scope", "in", [memberScope(team.id, alice.id), memberScope(team.id, bob.id)])
          .execute();
        expect(members.reduce((sum, m) => sum + m.cost_nano, 0n)).toBe(30n * projection);
        const ledger = await store.db
          .selectFrom("ledger")
          .select(["key_id", "account_id", "cost_nano"])
          .where("kind", "=", "usage")
          .where(
            "key_id",
            "in",
            keys.map((k) => k.key.id),
          )
          .execute();
        expect(ledger).toHaveLength(30);
        expect(ledger.reduce((sum, row) => sum + row.cost_nano, 0n)).toBe(30n * projection);
        for (const m of members) {
          const account = m.scope.endsWith(alice.id) ? alice.id : bob.id;
          expect(m.cost_nano).toBe(ledger.filter((row) => row.account_id === account).reduce((sum, row) => sum + row.cost_nano, 0n));
        }
        const accounts = await store.db.selectFrom("accounts").select(["total_spent_nano", "held_nano"]).where("id", "in", [alice.id, bob.id]).execute();
        expect(accounts.reduce((sum, a) => sum + a.total_spent_nano, 0n)).toBe(30n * projection);
        expect(accounts.every((a) => a.held_nano === 0n)).toBe(true);
      } finally {
        killAll();
        await store.close();
        await mock.close();
        await database.drop();
      }
    });
  });
}
