// Clamping under concurrency: 50 requests at once (one gateway, SQLite and PostgreSQL) and 50 through
// two gateway processes on one PostgreSQL, each asking for 32,000 output tokens on $0.05. Requests
// are clamped to what is left when they are admitted, or refused below the minimum; the sum charged
// never exceeds the starting balance and every counter agrees with the ledger and the holds.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServerResponse } from "node:http";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import { killAll, startGateway as spawnGateway, waitUntilHealthy } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway } from "../support/gateway.js";
import { json, sleep, startMockUpstream, type RecordedRequest } from "../support/mock-upstream.js";
import { BIG_MODELS } from "../support/clamping-models.js";

const REQUESTS = 50;
const START = 50_000_000n; // $0.05
// Staggered requests start this far apart: 49 gaps (490 ms) must outlast the first clamped request's
// whole life (admit, upstream, settle), which took up to ~150 ms on a loaded 2-core host, so that a
// second round is admitted at all.
const STAGGER_MS = 10;

afterAll(() => killAll());

/** Honours its limit, answering at most 800 output tokens after a delay (so that requests overlap). */
async function upstream(req: RecordedRequest, res: ServerResponse): Promise<void> {
  await sleep(20);
  const limit = req.body.max_tokens as number;
  const count = Math.min(800, limit);
  const finish = count < 800 ? "length" : "stop";
  const usage = { prompt_tokens: 5, completion_tokens: count, total_tokens: 5 + count };
  if (!req.body.stream) {
    json(res, 200, {
      id: "chatcmpl-conc",
      object: "chat.completion",
      created: 1,
      model: "upstream-big",
      choices: [{ index: 0, message: { role: "assistant", content: "w ".repeat(count) }, finish_reason: finish }],
      usage,
    });
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const base = { id: "chatcmpl-conc", object: "chat.completion.chunk", created: 1, model: "upstream-big" };
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: { content: "w ".repeat(count) }, finish_reason: null }] })}\n\n`);
  res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] })}\n\n`);
  res.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
  res.end("data: [DONE]\n\n");
}

interface Result {
  status: number;
  requestId: string;
  clamped: string | null;
  type?: string;
}

/**
 * Request i starts after i x staggerMs. A clamped request holds all that is left until it settles,
 * so requests arriving all at once race for one admission (the rest meet an empty balance, or lose
 * the clamped retry); staggered, several rounds are admitted, clamped to less and less.
 */
async function send(baseUrl: string, raw: string, i: number, staggerMs: number): Promise<Result> {
  if (staggerMs > 0) await sleep(i * staggerMs);
  const stream = i % 2 === 1;
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "big-gpt", max_tokens: 32_000, stream, messages: [{ role: "user", content: "Hi" }] }),
  });
  const text = await response.text();
  const result: Result = { status: response.status, requestId: response.headers.get("x-request-id")!, clamped: response.headers.get("x-gateway-max-tokens-clamped") };
  if (response.status !== 200) result.type = (JSON.parse(text) as { error: { type: string } }).error.type;
  else if (stream) expect(text).toContain('"finish_reason"');
  return result;
}

/** Held equals the sum of the live holds, read in one statement (one snapshot on both databases). */
async function heldMatchesHolds(store: Store, accountId: string): Promise<boolean> {
  const row = await sql<{ held: bigint; holds: bigint }>`
    select a.held_nano as held, (select coalesce(sum(h.amount_nano), 0) from holds h where h.account_id = a.id) as holds
    from accounts a where a.id = ${accountId}`.execute(store.db);
  const { held, holds } = row.rows[0]!;
  return BigInt(held) === BigInt(holds);
}

/** Every invariant once all requests ended: the ledger explains each counter, nothing is held, nothing overdrawn. */
async function checkBooks(store: Store, accountId: string, keyId: string, results: Result[], leastAdmitted: number): Promise<void> {
  const ok = results.filter((r) => r.status === 200);
  for (const refused of results.filter((r) => r.status !== 200)) expect(refused).toMatchObject({ status: 402, type: "quota_exceeded" });
  expect(ok.length).toBeGreaterThanOrEqual(leastAdmitted);
  expect(ok.some((r) => r.clamped !== null)).toBe(true);

  const ledger = await store.db.selectFrom("ledger").select(["request_id", "cost_nano", "note"]).where("account_id", "=", accountId).where("kind", "=", "usage").execute();
  expect(ledger.map((row) => row.request_id).sort()).toEqual(ok.map((r) => r.requestId).sort());
  expect(ledger.filter((row) => row.note !== null)).toEqual([]);
  const charged = ledger.reduce((sum, row) => sum + BigInt(row.cost_nano), 0n);
  expect(charged <= START).toBe(true);

  const account = (await store.accounts.get(accountId))!;
  const key = (await store.keys.get(keyId))!;
  expect(account.balance).toBe(START - charged);
  expect(account.balance >= 0n).toBe(true);
  expect(account.totalSpent).toBe(charged);
  expect([account.held, account.heldTokens, key.held, key.heldTokens]).toEqual([0n, 0, 0n, 0]);
  expect(key.spent).toBe(charged);
  expect(await store.db.selectFrom("holds").select("id").where("account_id", "=", accountId).execute()).toEqual([]);
  const monthly = await store.db.selectFrom("monthly_usage").select(["cost_nano", "requests"]).where("account_id", "=", accountId).execute();
  expect(monthly.map((m) => [BigInt(m.cost_nano), Number(m.requests)])).toEqual([[charged, ok.length]]);
}

for (const kind of DATABASE_KINDS) {
  describe(`clamping under concurrency on ${kind}`, () => {
    it(`${REQUESTS} concurrent requests on one gateway never overdraw, at once and staggered`, { timeout: 60_000 }, async () => {
      const mock = await startMockUpstream();
      mock.handler = upstream;
      const gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: BIG_MODELS }), { kind });
      try {
        const { account, key, raw } = await gateway.createAccount({ balance: "0.05", tier: "premium" });
        const store = gateway.app.ctx.store;
        let running = true;
        let samples = 0;
        const watched = [account.id];
        const sampler = (async () => {
          while (running) {
            for (const id of watched) expect(await heldMatchesHolds(store, id)).toBe(true);
            samples += 1;
            await sleep(2);
          }
        })();
        const atOnce = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => send(gateway.url, raw, i, 0)));
        await checkBooks(store, account.id, key.id, atOnce, 1);
        // A second account, its requests staggered: several rounds of clamped admissions.
        const second = await gateway.createAccount({ balance: "0.05", tier: "premium" });
        watched.push(second.account.id);
        const staggered = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => send(gateway.url, second.raw, i, STAGGER_MS)));
        running = false;
        await sampler;
        expect(samples).toBeGreaterThan(0);
        await checkBooks(store, second.account.id, second.key.id, staggered, 2);
      } finally {
        await gateway.close();
        await mock.close();
      }
    });
  });
}

describe.runIf(DATABASE_KINDS.includes("postgres"))("clamping with two gateway processes on postgres", () => {
  it(`${REQUESTS} requests split across two processes never overdraw`, { timeout: 120_000 }, async () => {
    const mock = await startMockUpstream();
    mock.handler = upstream;
    const database = await createTestDatabase("postgres");
    const dir = mkdtempSync(join(tmpdir(), "gw-clamp-"));
    const configPath = join(dir, "gateway.config.yaml");
    writeFileSync(configPath, mockConfig({ openaiUrl: mock.url, extra: BIG_MODELS }));
    const env = { ...database.env, GATEWAY_CONFIG: configPath, LOG_LEVEL: "warn" };
    const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
    try {
      const account = await store.accounts.create({ email: "clamp-processes@example.com", tier: "premium", balance: START });
      const { key, raw } = await store.keys.create({ accountId: account.id });
      const gateways = await Promise.all([spawnGateway(dir, env), spawnGateway(dir, env)]);
      await Promise.all(gateways.map((g) => waitUntilHealthy(g)));
      const results = await Promise.all(Array.from({ length: REQUESTS }, (_, i) => send(gateways[i % 2]!.baseUrl, raw, i, STAGGER_MS)));
      await checkBooks(store, account.id, key.id, results, 2);
    } finally {
      killAll();
      await store.close();
      await mock.close();
      await database.drop();
    }
  });
});
