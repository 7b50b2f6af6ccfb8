// `gateway serve --workers 4` on SQLite as a real child process, with each worker committing its own
// billing writes (the default) and with the primary committing every worker's admissions,
// settlements and releases (GATEWAY_SQLITE_SHARED_WRITER=1, ADR 0047): parallel requests are billed exactly
// (one ledger row per answered request, the ledger's sum is the balance's change, never below zero,
// no hold left); a revoke is seen by every worker within a second; a worker killed with SIGKILL
// mid-load loses nothing it answered and its holds are released by a sweeper; with the primary as the
// writer, a primary that stops answering fails requests with the catalogue's error instead of
// hanging, and the workers end with it.
import { Agent, request } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import { createTestDatabase, type TestDatabase } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { killAll, startGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "./gateway-process.js";

const WORKERS = 4;
/** Four whole gateways starting at once on a loaded CI machine: longer than one process's readiness deadline. */
const START_DEADLINE_MS = 150_000;

interface Answer {
  status: number;
  requestId: string;
  body: string;
  /** The connection broke before a whole answer came. */
  broken: boolean;
}

/** A buffered chat completion; agent false: a connection of its own, so that the primary spreads them over the workers. */
function chat(baseUrl: string, apiKey: string, agent: Agent | false = false): Promise<Answer> {
  const body = JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "x" }], max_tokens: 100 });
  return new Promise((resolve) => {
    const req = request(
      `${baseUrl}/v1/chat/completions`,
      { method: "POST", agent, headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, timeout: 40_000 },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, requestId: String(res.headers["x-request-id"]), body: text, broken: !res.complete }));
        res.on("error", () => resolve({ status: res.statusCode ?? 0, requestId: String(res.headers["x-request-id"]), body: text, broken: true }));
      },
    );
    req.on("error", () => resolve({ status: 0, requestId: "", body: "", broken: true }));
    req.on("timeout", () => req.destroy());
    req.end(body);
  });
}

function workerPids(gateway: GatewayProcess): Map<number, number> {
  return new Map([...gateway.stderr().matchAll(/^worker (\d+) \(pid (\d+)\) listening$/gm)].map((m) => [Number(m[1]), Number(m[2])]));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

for (const shared of [false, true])
  describe(`gateway serve --workers ${WORKERS} on SQLite, billing written by ${shared ? "the primary" : "each worker"}`, () => {
    let database: TestDatabase;
    let mock: MockUpstream;
    let dir: string;
    let store: Store;
    let gateway: GatewayProcess;

    beforeAll(
      async () => {
        mock = await startMockUpstream();
        mock.handler = async (_req, res) => {
          await sleep(50);
          json(res, 200, chatCompletion("hi", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
        };
        database = await createTestDatabase("sqlite");
        dir = mkdtempSync(join(tmpdir(), "gw-writer-"));
        writeFileSync(join(dir, "gateway.config.yaml"), mockConfig({ openaiUrl: mock.url }));
        store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
        const env = { ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml"), GATEWAY_SQLITE_SHARED_WRITER: shared ? "1" : "0" };
        gateway = await startGateway(dir, env, { workers: WORKERS });
        await waitUntilHealthy(gateway, START_DEADLINE_MS);
        await waitFor(
          () => workerPids(gateway).size === WORKERS,
          START_DEADLINE_MS,
          () => `not every worker listens:\n${gateway.stderr()}`,
        );
      },
      2 * START_DEADLINE_MS + 60_000,
    );

    afterAll(async () => {
      killAll();
      await store?.close();
      await mock?.close();
      await database?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** The books of one account: every usage row once, their sum the balance's change, no hold left. */
    async function expectExactBooks(accountId: string, start: bigint, answered: readonly string[]): Promise<void> {
      const rows = await store.db.selectFrom("ledger").select(["request_id", "cost_nano"]).where("account_id", "=", accountId).where("kind", "=", "usage").execute();
      const charged = new Set(rows.map((row) => row.request_id));
      expect(charged.size, "a request charged twice").toBe(rows.length);
      for (const id of answered) expect(charged.has(id), `answered request ${id} not charged`).toBe(true);
      const total = rows.reduce((sum, row) => sum + BigInt(row.cost_nano), 0n);
      const account = (await store.accounts.get(accountId))!;
      expect(account.balance >= 0n).toBe(true);
      expect(start - account.balance).toBe(total);
      expect(account.totalSpent).toBe(total);
      expect(account.held).toBe(0n);
      expect(await store.db.selectFrom("holds").select("id").where("account_id", "=", accountId).execute()).toEqual([]);
      const keys = await store.keys.listByAccount(accountId);
      expect(keys.map((k) => [k.spent, k.held])).toEqual([[total, 0n]]);
    }

    it("bills 60 parallel requests across the workers exactly, and refuses rather than overdraw", { timeout: 120_000 }, async () => {
      // Room for about 15 requests' holds at once (each holds ~0.2 mUSD, costs 0.02 mUSD).
      const START = 3_250_000n;
      const account = await store.accounts.create({ email: "exact@example.com", tier: "standard", balance: START });
      const { raw } = await store.keys.create({ accountId: account.id });
      const answers = await Promise.all(Array.from({ length: 60 }, () => chat(gateway.baseUrl, raw)));
      const ok = answers.filter((a) => a.status === 200);
      expect(
        answers.every((a) => a.status === 200 || a.status === 402),
        answers.map((a) => `${a.status} ${a.body.slice(0, 200)}`).join("\n"),
      ).toBe(true);
      expect(ok.length).toBeGreaterThanOrEqual(15);
      await expectExactBooks(
        account.id,
        START,
        ok.map((a) => a.requestId),
      );
      const rows = await store.db.selectFrom("ledger").select("request_id").where("account_id", "=", account.id).where("kind", "=", "usage").execute();
      expect(rows.map((r) => r.request_id).sort()).toEqual(ok.map((a) => a.requestId).sort());
      // Every worker served some of them (the log's worker field). A worker writes its log lines in
      // blocks, a few hundred milliseconds after the answers (src/core/log-destination.ts): wait for them.
      const served = () =>
        new Set(
          gateway
            .stdout()
            .split("\n")
            .filter((line) => line.includes('"path":"/v1/chat/completions"'))
            .map((line) => (JSON.parse(line) as { worker: number }).worker),
        );
      await waitFor(
        () => served().size === WORKERS,
        5_000,
        () => `workers that logged a request: ${[...served()].join(", ")}`,
      );
    });

    it("a revoke is seen by every worker within a second", { timeout: 60_000 }, async () => {
      const account = await store.accounts.create({ email: "revoke@example.com", tier: "standard", balance: 1_000_000_000n });
      const { raw, key } = await store.keys.create({ accountId: account.id });
      // Each worker caches the key (round-robin over new connections, one after the other).
      for (let i = 0; i < 2 * WORKERS; i++) expect((await chat(gateway.baseUrl, raw)).status).toBe(200);
      // Through the store only, as another process would: every worker learns it from auth_events.
      await store.keys.revoke(key.id);
      await sleep(1_000);
      const after = [];
      for (let i = 0; i < 2 * WORKERS; i++) after.push(await chat(gateway.baseUrl, raw));
      expect(after.map((a) => a.status)).toEqual(Array(2 * WORKERS).fill(401));
    });

    it("a worker killed with SIGKILL mid-load loses nothing it answered; a sweeper releases its holds", { timeout: 300_000 }, async () => {
      const START = 1_000_000_000n;
      const account = await store.accounts.create({ email: "sigkill@example.com", tier: "standard", balance: START });
      const { raw } = await store.keys.create({ accountId: account.id });
      mock.handler = async (_req, res) => {
        await sleep(400);
        json(res, 200, chatCompletion("hi", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
      };
      const load = Promise.all(Array.from({ length: 40 }, () => chat(gateway.baseUrl, raw)));
      await sleep(200);
      const victim = workerPids(gateway).get(1)!;
      process.kill(victim, "SIGKILL");
      const answers = await load;
      const ok = answers.filter((a) => a.status === 200 && !a.broken);
      expect(ok.length).toBeGreaterThan(0);
      expect(answers.filter((a) => a.broken).length).toBeGreaterThan(0);
      await waitFor(
        () => /^worker 5 \(pid \d+\) listening$/m.test(gateway.stderr()),
        START_DEADLINE_MS,
        () => `no replacement worker:\n${gateway.stderr()}`,
      );
      // The killed worker's holds stay until they expire: expire them now; a sweeper (every 30 s) releases them.
      await store.db.updateTable("holds").set({ expires_at: 0n }).where("account_id", "=", account.id).execute();
      await waitFor(
        async () => (await store.accounts.get(account.id))!.held === 0n,
        60_000,
        () => "the sweeper did not release the killed worker's holds",
      );
      await expectExactBooks(
        account.id,
        START,
        ok.map((a) => a.requestId),
      );
    });

    if (shared)
      it("a primary that stops answering fails requests with the catalogue's error, not a hang; the workers end with it", { timeout: 120_000 }, async () => {
        const account = await store.accounts.create({ email: "stopped@example.com", tier: "standard", balance: 1_000_000_000n });
        const { raw } = await store.keys.create({ accountId: account.id });
        mock.handler = (_req, res) => json(res, 200, chatCompletion("hi"));
        // One kept-alive connection, accepted (through the primary) before it stops.
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          expect((await chat(gateway.baseUrl, raw, agent)).status).toBe(200);
          const primary = gateway.child.pid!;
          const workers = [...workerPids(gateway).values()].filter(alive);
          process.kill(primary, "SIGSTOP");
          let failed: Answer;
          try {
            failed = await chat(gateway.baseUrl, raw, agent);
          } finally {
            process.kill(primary, "SIGCONT");
          }
          expect(failed.status, failed.body).toBe(502);
          expect(JSON.parse(failed.body)).toMatchObject({ error: { type: "ledger_write_failed", code: "billing_writer_unavailable" } });
          expect(failed.requestId).toMatch(/\S/);
          // Not charged; the late hold (if the primary committed it after the deadline) expires as a crashed worker's would.
          expect(await store.db.selectFrom("ledger").select("id").where("request_id", "=", failed.requestId).execute()).toEqual([]);
          // The writer's process gone: node:cluster ends every worker.
          process.kill(primary, "SIGKILL");
          await waitFor(
            () => workers.every((pid) => !alive(pid)),
            20_000,
            () => `workers still running after the primary died: ${workers.filter(alive).join(", ")}`,
          );
        } finally {
          agent.destroy();
        }
      });
  });
