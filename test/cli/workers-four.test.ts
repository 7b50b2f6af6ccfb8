// `gateway serve --workers 4` as a real child process on each database (issue 43): billing is exact
// across four workers (200 parallel requests against a balance for 30: exactly 30 answered, held is
// always the holds in flight and never over the balance, one ledger row each), a key revoked by
// another process is refused by every worker within a second, and a worker killed with SIGKILL
// mid-stream is replaced while every stream that finished is charged exactly once and the dead
// worker's holds are released by a sweeper. (Two workers: workers.test.ts; SQLite's shared writer:
// workers-sqlite-writer.test.ts.)
import { request } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseUsd } from "../../src/core/money.js";
import { openStore, type Store } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, chatStream, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { killAll, startGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "./gateway-process.js";

afterAll(() => killAll());

const WORKERS = 4;
/** Four workers starting at once on a loaded CI machine: longer than one process's readiness deadline. */
const START_DEADLINE_MS = 120_000;
/** gpt-mock's prices (mockConfig): input $1 and output $2 per million tokens, in nano-USD per token. */
const INPUT_NANO = 1000n;
const OUTPUT_NANO = 2000n;
const MAX_TOKENS = 100;

interface Answer {
  status: number;
  requestId: string;
  body: string;
  /** The connection broke before the whole answer came. */
  broken: boolean;
}

/**
 * A chat completion on a connection of its own (agent: false), so that the primary spreads them over
 * the workers; `onFirstChunk` runs when the first bytes of the body arrive.
 */
function chat(baseUrl: string, apiKey: string, options: { stream?: boolean; onFirstChunk?: () => void } = {}): Promise<Answer> {
  const body = JSON.stringify({
    model: "gpt-mock",
    messages: [{ role: "user", content: "Hi" }],
    max_tokens: MAX_TOKENS,
    ...(options.stream && { stream: true, stream_options: { include_usage: true } }),
  });
  return new Promise((resolve) => {
    const req = request(
      `${baseUrl}/v1/chat/completions`,
      { method: "POST", agent: false, headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, timeout: 40_000 },
      (res) => {
        let text = "";
        const answer = (broken: boolean) => resolve({ status: res.statusCode ?? 0, requestId: String(res.headers["x-request-id"]), body: text, broken });
        res.setEncoding("utf8").on("data", (chunk: string) => {
          if (text === "") options.onFirstChunk?.();
          text += chunk;
        });
        res.on("end", () => answer(!res.complete));
        res.on("error", () => answer(true));
        res.on("aborted", () => answer(true));
      },
    );
    req.on("error", () => resolve({ status: 0, requestId: "", body: "", broken: true }));
    req.on("timeout", () => req.destroy());
    req.end(body);
  });
}

/** The pids the primary printed for its workers ("worker N (pid P) listening"), by worker id. */
function workerPids(gateway: GatewayProcess): Map<number, number> {
  return new Map([...gateway.stderr().matchAll(/^worker (\d+) \(pid (\d+)\) listening$/gm)].map((m) => [Number(m[1]), Number(m[2])]));
}

/** Which worker served each of these requests, from the request lines on stdout (written in blocks: waits for them). */
async function servingWorkers(gateway: GatewayProcess, requestIds: readonly string[]): Promise<Map<string, number>> {
  const served = new Map<string, number>();
  const read = () => {
    for (const line of gateway.stdout().split("\n")) {
      if (!line.includes('"path":"/v1/chat/completions"')) continue;
      const parsed = JSON.parse(line) as { worker: number; request_id: string };
      if (requestIds.includes(parsed.request_id)) served.set(parsed.request_id, parsed.worker);
    }
    return served.size === requestIds.length;
  };
  await waitFor(read, 15_000, () => `request lines missing: ${requestIds.filter((id) => !served.has(id)).join(", ")}`);
  return served;
}

for (const kind of DATABASE_KINDS)
  describe(`gateway serve --workers ${WORKERS} on ${kind}`, () => {
    let database: TestDatabase;
    let mock: MockUpstream;
    let dir: string;
    let store: Store;
    let gateway: GatewayProcess;
    /** The hold of one buffered request (max_tokens 100), and the usage the mock reports so that it costs exactly that. */
    let projection: bigint;
    let exactUsage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };

    beforeAll(async () => {
      mock = await startMockUpstream();
      database = await createTestDatabase(kind);
      dir = mkdtempSync(join(tmpdir(), "gw-workers4-"));
      writeFileSync(join(dir, "gateway.config.yaml"), mockConfig({ openaiUrl: mock.url }));
      store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      gateway = await startGateway(dir, { ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml") }, { workers: WORKERS });
      await waitUntilHealthy(gateway, START_DEADLINE_MS);
      await waitFor(
        () => workerPids(gateway).size === WORKERS && gateway.stderr().includes("model-gateway listening"),
        START_DEADLINE_MS,
        () => `not every worker listens:\n${gateway.stderr()}`,
      );
      // An account with nothing on it is refused, and the refusal names the hold of one request.
      const empty = await store.accounts.create({ email: `empty-${kind}@example.com`, tier: "standard", balance: 0n });
      const probe = await chat(gateway.baseUrl, (await store.keys.create({ accountId: empty.id })).raw);
      expect(probe.status).toBe(402);
      projection = parseUsd(/projected cost of ([\d.]+) USD/.exec(probe.body)![1]!)!;
      // The hold prices the prompt estimate at the input price plus max_tokens at the output price.
      const promptTokens = (projection - BigInt(MAX_TOKENS) * OUTPUT_NANO) / INPUT_NANO;
      expect(promptTokens * INPUT_NANO + BigInt(MAX_TOKENS) * OUTPUT_NANO).toBe(projection);
      exactUsage = { prompt_tokens: Number(promptTokens), completion_tokens: MAX_TOKENS, total_tokens: Number(promptTokens) + MAX_TOKENS };
    }, START_DEADLINE_MS + 30_000);

    afterAll(async () => {
      killAll();
      await store?.close();
      await mock?.close();
      await database?.drop();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    /** The account's held amount and the sum of its holds, read in one statement (one snapshot on either database). */
    async function reserved(accountId: string): Promise<{ balance: bigint; held: bigint; holds: bigint }> {
      const { rows } = await sql<{
        balance: bigint | number | string;
        held: bigint | number | string;
        holds: bigint | number | string;
      }>`select balance_nano as balance, held_nano as held,
          (select coalesce(sum(amount_nano), 0) from holds where account_id = ${accountId}) as holds
        from accounts where id = ${accountId}`.execute(store.db);
      const row = rows[0]!;
      return { balance: BigInt(String(row.balance)), held: BigInt(String(row.held)), holds: BigInt(String(row.holds)) };
    }

    /** The books of one account: exactly these requests charged, once each; their sum the balance's change; nothing held. */
    async function expectExactBooks(accountId: string, start: bigint, answered: readonly string[]): Promise<bigint> {
      const rows = await store.db.selectFrom("ledger").select(["request_id", "cost_nano"]).where("account_id", "=", accountId).where("kind", "=", "usage").execute();
      expect(rows.map((row) => row.request_id).sort()).toEqual([...answered].sort());
      const total = rows.reduce((sum, row) => sum + BigInt(row.cost_nano), 0n);
      const account = (await store.accounts.get(accountId))!;
      expect(account.balance >= 0n).toBe(true);
      expect(start - account.balance).toBe(total);
      expect(account.totalSpent).toBe(total);
      expect(await reserved(accountId)).toEqual({ balance: start - total, held: 0n, holds: 0n });
      const keys = await store.keys.listByAccount(accountId);
      expect(keys.map((k) => [k.spent, k.held])).toEqual([[total, 0n]]);
      return total;
    }

    it("200 parallel requests against a balance for 30: exactly 30 answered by all four workers, held always the holds in flight", { timeout: 90_000 }, async () => {
      mock.handler = async (_req, res) => {
        await sleep(20);
        json(res, 200, chatCompletion("ok", { usage: exactUsage }));
      };
      mock.requests.length = 0;
      const START = 30n * projection + projection / 2n;
      const account = await store.accounts.create({ email: `exact-${kind}@example.com`, tier: "standard", balance: START });
      const { raw } = await store.keys.create({ accountId: account.id });
      const samples: Array<{ balance: bigint; held: bigint; holds: bigint }> = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          samples.push(await reserved(account.id));
          await sleep(10);
        }
      })();
      let answers: Answer[];
      try {
        answers = await Promise.all(Array.from({ length: 200 }, () => chat(gateway.baseUrl, raw)));
      } finally {
        sampling = false;
        await sampler;
      }
      const ok = answers.filter((a) => a.status === 200);
      expect(ok).toHaveLength(30);
      for (const refused of answers.filter((a) => a.status !== 200)) {
        expect(refused.status, refused.body).toBe(402);
        expect(JSON.parse(refused.body)).toMatchObject({ error: { type: "quota_exceeded", code: "insufficient_balance" } });
        expect(refused.requestId).toMatch(/^req_/);
      }
      // During the burst: what is held is exactly the holds in flight, and never more than the balance.
      expect(samples.length).toBeGreaterThan(3);
      expect(samples.some((s) => s.held > 0n)).toBe(true);
      for (const sample of samples) {
        expect(sample.held).toBe(sample.holds);
        expect(sample.balance - sample.held >= 0n, `held ${sample.held} over balance ${sample.balance}`).toBe(true);
      }
      expect(
        await expectExactBooks(
          account.id,
          START,
          ok.map((a) => a.requestId),
        ),
      ).toBe(30n * projection);
      expect(mock.requests).toHaveLength(30);
      // Every worker took part (the request lines' worker field).
      const workers = await servingWorkers(
        gateway,
        answers.map((a) => a.requestId),
      );
      expect(new Set(workers.values()).size).toBe(WORKERS);
    });

    it("a key revoked by another process is refused by every worker within a second", { timeout: 60_000 }, async () => {
      mock.handler = (_req, res) => json(res, 200, chatCompletion("ok", { usage: exactUsage }));
      const account = await store.accounts.create({ email: `revoke-${kind}@example.com`, tier: "standard", balance: 1_000_000_000n });
      const { raw, key } = await store.keys.create({ accountId: account.id });
      // Each worker caches the key (round-robin over new connections, one after the other).
      const before: Answer[] = [];
      for (let i = 0; i < 2 * WORKERS; i++) before.push(await chat(gateway.baseUrl, raw));
      expect(before.map((a) => a.status)).toEqual(Array(2 * WORKERS).fill(200));
      // Through the store only, as the admin CLI does: every worker learns it from auth_events.
      await store.keys.revoke(key.id);
      await sleep(1_000);
      const after: Answer[] = [];
      for (let i = 0; i < 2 * WORKERS; i++) after.push(await chat(gateway.baseUrl, raw));
      expect(after.map((a) => a.status)).toEqual(Array(2 * WORKERS).fill(401));
      for (const answer of after) expect(JSON.parse(answer.body)).toMatchObject({ error: { type: "auth_error" } });
      // The refusals came from every worker.
      const workers = await servingWorkers(
        gateway,
        after.map((a) => a.requestId),
      );
      expect(new Set(workers.values()).size).toBe(WORKERS);
      await expectExactBooks(
        account.id,
        1_000_000_000n,
        before.map((a) => a.requestId),
      );
    });

    it("a worker killed mid-stream is replaced; its holds are released by a sweeper; every finished stream is charged once", { timeout: 90_000 }, async () => {
      mock.handler = (req, res) =>
        chatStream(
          req,
          res,
          Array.from({ length: 20 }, (_, i) => `w${i} `),
          { delayMs: 100 },
        );
      const START = 1_000_000_000n;
      const account = await store.accounts.create({ email: `sigkill-${kind}@example.com`, tier: "standard", balance: START });
      const { raw } = await store.keys.create({ accountId: account.id });
      // Two streams per worker, each under way before the next is opened, so that round-robin alternates.
      const streams: Array<Promise<Answer>> = [];
      for (let i = 0; i < 2 * WORKERS; i++) {
        let started!: () => void;
        const first = new Promise<void>((resolve) => (started = resolve));
        streams.push(chat(gateway.baseUrl, raw, { stream: true, onFirstChunk: started }));
        await first;
      }
      const victim = workerPids(gateway).get(1)!;
      process.kill(victim, "SIGKILL");
      const ends = await Promise.all(streams);
      const finished = ends.filter((a) => a.status === 200 && !a.broken && a.body.trimEnd().endsWith("data: [DONE]"));
      const broken = ends.filter((a) => a.broken);
      expect(finished.length + broken.length).toBe(2 * WORKERS);
      expect(broken.length).toBeGreaterThanOrEqual(1);
      expect(finished.length).toBeGreaterThanOrEqual(WORKERS);

      // The primary starts a replacement (worker 5), which serves.
      await waitFor(
        () => /^worker 5 \(pid \d+\) listening$/m.test(gateway.stderr()),
        30_000,
        () => `no replacement worker:\n${gateway.stderr()}`,
      );
      expect(gateway.stderr()).toMatch(new RegExp(`^worker 1 \\(pid ${victim}\\) exited with signal SIGKILL; starting a replacement in \\d+ ms$`, "m"));
      const again: Answer[] = [];
      for (let i = 0; i < WORKERS; i++) again.push(await chat(gateway.baseUrl, raw, { stream: true }));
      for (const answer of again) expect(answer.broken || answer.status !== 200, answer.body).toBe(false);
      const replacement = workerPids(gateway).get(5)!;
      expect(
        new Set(
          (
            await servingWorkers(
              gateway,
              again.map((a) => a.requestId),
            )
          ).values(),
        ),
      ).toContain(5);
      expect(replacement).not.toBe(victim);

      // The dead worker's holds stay until they expire: expire them now (instead of in 15 minutes);
      // a live worker's sweeper (every 30 s) releases them.
      const held = await reserved(account.id);
      expect(held.held > 0n).toBe(true);
      expect(held.held).toBe(held.holds);
      await store.db.updateTable("holds").set({ expires_at: 0n }).where("account_id", "=", account.id).execute();
      await waitFor(
        async () => (await reserved(account.id)).held === 0n,
        45_000,
        () => "no sweeper released the killed worker's holds",
      );
      await expectExactBooks(
        account.id,
        START,
        [...finished, ...again].map((a) => a.requestId),
      );
    });
  });
