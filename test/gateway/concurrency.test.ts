// 200 concurrent requests through TWO gateway processes sharing one database (and again through one
// `gateway serve --workers 2`), against a balance and a key cap that cover only some of them: every
// request is charged exactly once or refused, and the books balance to the nano.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { killAll, startGateway as spawnGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream } from "../support/mock-upstream.js";

const REQUESTS = 200;

afterAll(() => killAll());

/** Two processes side by side, or one cluster of two workers (round-robin shares its port between them). */
const TOPOLOGIES = ["two processes", "--workers 2"] as const;

for (const kind of DATABASE_KINDS) {
  for (const topology of TOPOLOGIES)
    describe(`concurrent billing on ${kind} with ${topology === "two processes" ? "two gateway processes" : "gateway serve --workers 2"}`, () => {
      it("charges each request once or refuses it, and never overspends", { timeout: 120_000 }, async () => {
        const mock = await startMockUpstream();
        // Actual usage stays under the admission projection (prompt estimate + max_tokens 100).
        mock.handler = (_req, res) => {
          setTimeout(() => json(res, 200, chatCompletion("ok", { usage: { prompt_tokens: 4, completion_tokens: 50, total_tokens: 54 } })), 5);
        };
        const database = await createTestDatabase(kind);
        const dir = mkdtempSync(join(tmpdir(), "gw-conc-"));
        const configPath = join(dir, "gateway.config.yaml");
        writeFileSync(configPath, mockConfig({ openaiUrl: mock.url }));
        // The cluster's request lines say which worker served each request.
        const env = { ...database.env, GATEWAY_CONFIG: configPath, LOG_LEVEL: topology === "two processes" ? "warn" : "info" };

        const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
        const START = 10_000_000n; // 0.01 USD: about 96 requests at 104,000 nano each
        const account = await store.accounts.create({ email: `conc-${kind}@example.com`, tier: "standard", balance: START });
        const capped = await store.keys.create({ accountId: account.id, budgetCap: 4_000_000n });
        const open = await store.keys.create({ accountId: account.id });
        try {
          let gateways: GatewayProcess[];
          if (topology === "two processes") {
            gateways = await Promise.all([spawnGateway(dir, env), spawnGateway(dir, env)]);
            await Promise.all(gateways.map((g) => waitUntilHealthy(g)));
          } else {
            const cluster = await spawnGateway(dir, env, { workers: 2 });
            await waitUntilHealthy(cluster);
            await waitFor(
              () => cluster.stderr().includes("model-gateway listening"),
              20_000,
              () => cluster.stderr(),
            );
            gateways = [cluster, cluster];
          }

          const results = await Promise.all(
            Array.from({ length: REQUESTS }, async (_, i) => {
              const gateway = gateways[i % 2]!;
              const raw = i % 3 === 0 ? capped.raw : open.raw;
              const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
                method: "POST",
                headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
                body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 100 }),
              });
              const body = (await response.json()) as { error?: { type: string } };
              return { status: response.status, type: body.error?.type, requestId: response.headers.get("x-request-id")! };
            }),
          );

          const ok = results.filter((r) => r.status === 200);
          const refused = results.filter((r) => r.status !== 200);
          expect(ok.length).toBeGreaterThan(10);
          expect(refused.length).toBeGreaterThan(10);
          for (const r of refused) {
            expect(r.status).toBe(402);
            expect(["quota_exceeded", "key_budget_exceeded"]).toContain(r.type);
          }

          const ledger = await store.db
            .selectFrom("ledger")
            .select(["request_id", "cost_nano", "key_id"])
            .where("account_id", "=", account.id)
            .where("kind", "=", "usage")
            .execute();
          expect(ledger.map((row) => row.request_id).sort()).toEqual(ok.map((r) => r.requestId).sort());
          const ledgerSum = ledger.reduce((sum, row) => sum + BigInt(row.cost_nano), 0n);
          const after = (await store.accounts.get(account.id))!;
          const keys = await store.keys.listByAccount(account.id);
          expect(after.totalSpent).toBe(ledgerSum);
          expect(START - after.balance).toBe(ledgerSum);
          expect(keys.reduce((sum, k) => sum + k.spent, 0n)).toBe(ledgerSum);
          expect(after.balance >= 0n).toBe(true);
          expect(after.held).toBe(0n);
          for (const key of keys) {
            expect(key.held).toBe(0n);
            if (key.budgetCap !== null) expect(key.spent <= key.budgetCap).toBe(true);
          }
          const notes = await store.db.selectFrom("ledger").select("note").where("account_id", "=", account.id).where("kind", "=", "usage").where("note", "is not", null).execute();
          expect(notes).toEqual([]);
          if (topology === "--workers 2") {
            // Both workers served: the request lines (written in blocks: SIGTERM drains and flushes them).
            const cluster = gateways[0]!;
            cluster.child.kill("SIGTERM");
            expect(await cluster.exited(30_000)).toEqual({ code: 0, signal: null });
            const workers = cluster
              .stdout()
              .split("\n")
              .filter((line) => line.includes('"path":"/v1/chat/completions"'))
              .map((line) => (JSON.parse(line) as { worker: number }).worker);
            expect(workers).toHaveLength(REQUESTS);
            expect(new Set(workers)).toEqual(new Set([1, 2]));
          }
        } finally {
          killAll();
          await store.close();
          await mock.close();
          await database.drop();
        }
      });
    });
}
