// A rolling upgrade under load (docs/operations.md#upgrading, ADR 0050): the previous release
// (deploy/previous-release.json, built from git by previous-release.ts) serves one PostgreSQL
// database behind a switch; this release starts on the same database and migrates it while the
// old one serves; the old one, now on the migrated schema, still answers the previous release's
// own smoke (an account and a key made through its admin API, a chat, its usage views); traffic is
// switched to the new one and the old one drained with SIGTERM while two of its streams are held
// half-way (it must finish them before it exits). All along, clients send buffered
// and streamed chat completions: not one fails, and the ledger is exact (each answered request
// once, by request id; each balance equals its ledger's sum; no hold left; the hash chain verifies).
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GATEWAY_BIN, killAll, startGateway, waitUntilHealthy, type GatewayProcess } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { chatCompletion, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { previousRelease, type PreviousRelease } from "./previous-release.js";
import { chatOnce, startLoad, startTrafficSwitch, type Outcome } from "./traffic-switch.js";

const ANSWER = "upgraded";
const CLIENTS = 6;
/** A loaded 2-core CI machine: starting a gateway that migrates can take a while. */
const START_DEADLINE_MS = 120_000;
const PHASE_DEADLINE_MS = 60_000;

const CONFIG = (upstreamUrl: string) => `
providers:
  mockai:
    type: openai
    base_url: "${upstreamUrl}/v1"
    keys: ["sk-mock-openai-key-0001"]
    apis: [chat]
models:
  - id: gpt-mock
    kind: chat
    provider: mockai
    upstream_model: upstream-gpt
    max_output_tokens: 4096
    default_output_tokens: 100
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
tiers:
  standard: { models: [gpt-mock] }
server:
  default_tier: standard
`;

const USAGE = { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 };

/**
 * Streams held half-way while the gate is closed: the answers the previous release is giving when
 * it is told to stop, which its drain must finish.
 */
const gate = { closed: false, held: 0, open: () => undefined as void, opened: Promise.resolve() };

function closeGate(): void {
  gate.closed = true;
  gate.opened = new Promise<void>((resolve) => {
    gate.open = () => {
      gate.closed = false;
      resolve();
    };
  });
}

async function gatedStream(res: ServerResponse): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const base = { id: "chatcmpl-upgrade", object: "chat.completion.chunk", created: 1_700_000_000, model: "upstream-gpt" };
  const send = (chunk: object) => res.write(`data: ${JSON.stringify({ ...base, ...chunk })}\n\n`);
  send({ choices: [{ index: 0, delta: { role: "assistant", content: "up" }, finish_reason: null }] });
  // Two, all on the previous release (the switch moves after they are held); the rest flow on.
  if (gate.closed && gate.held < 2) {
    gate.held += 1;
    await gate.opened;
  }
  await sleep(15);
  send({ choices: [{ index: 0, delta: { content: "graded" }, finish_reason: null }] });
  send({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
  send({ choices: [], usage: USAGE });
  res.end("data: [DONE]\n\n");
}

function progress(line: string): void {
  process.stderr.write(`rolling-upgrade: ${line}\n`);
}

async function until(what: string, predicate: () => boolean, outcomes: Outcome[] = [], timeoutMs = PHASE_DEADLINE_MS): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) {
      const failed = outcomes.filter((outcome) => !outcome.ok).slice(-5);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last failures: ${JSON.stringify(failed)}`);
    }
    await sleep(100);
  }
}

async function ready(gateway: GatewayProcess): Promise<void> {
  await waitUntilHealthy(gateway, START_DEADLINE_MS);
  const deadline = Date.now() + START_DEADLINE_MS;
  for (;;) {
    const response = await fetch(`${gateway.baseUrl}/readyz`).catch(() => null);
    await response?.arrayBuffer();
    if (response?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`${gateway.baseUrl}/readyz never answered 200:\n${gateway.stderr().slice(-3000)}`);
    await sleep(250);
  }
}

/** The admin API of one gateway, with a token the previous release's CLI made. */
function adminApi(baseUrl: string, token: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
    const response = await fetch(`${baseUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
}

/** An account with a balance and one key, made through the admin API: its id and raw key. */
async function accountWithKey(api: ReturnType<typeof adminApi>, email: string, balanceUsd: string, context = ""): Promise<{ accountId: string; key: string }> {
  const account = await api("POST", "/accounts", { email, tier: "standard", balance_usd: balanceUsd });
  expect(account.status, `${context}${JSON.stringify(account.body)}`).toBe(201);
  const accountId = (account.body.account as { id: string }).id;
  const key = await api("POST", `/accounts/${accountId}/keys`, { name: "upgrade" });
  expect(key.status, `${context}${JSON.stringify(key.body)}`).toBe(201);
  return { accountId, key: key.body.raw_key as string };
}

describe.runIf(DATABASE_KINDS.includes("postgres"))("a rolling upgrade from the previous release on PostgreSQL", () => {
  let release: PreviousRelease;
  let upstream: MockUpstream;
  let database: TestDatabase;
  const dirs: string[] = [];

  beforeAll(async () => {
    // Cold: `npm ci` and the build of the previous release (minutes); warm: at once.
    release = await previousRelease();
    upstream = await startMockUpstream();
    upstream.handler = async (req, res) => {
      if (req.body?.stream) return gatedStream(res);
      await sleep(30);
      json(res, 200, chatCompletion(ANSWER, { usage: USAGE }));
    };
    database = await createTestDatabase("postgres");
  }, 15 * 60_000);

  afterAll(async () => {
    killAll();
    await upstream?.close();
    await database?.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("switches traffic from the previous release to this one with no failed request and an exact ledger", { timeout: 8 * 60_000 }, async () => {
    const dir = (prefix: string) => {
      const made = mkdtempSync(join(tmpdir(), prefix));
      dirs.push(made);
      return made;
    };
    const configPath = join(dir("gw-upgrade-config-"), "gateway.config.yaml");
    writeFileSync(configPath, CONFIG(upstream.url));
    const env = (dataDir: string) => ({ ...database.env, GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: configPath, LOG_LEVEL: "warn" });
    const cli = async (bin: string, args: string[]) =>
      (await promisify(execFile)(process.execPath, [bin, ...args], { env: { ...process.env, ...env(dir("gw-upgrade-cli-")) }, timeout: 60_000 })).stdout;
    const sql = new pg.Client({ connectionString: database.databaseUrl! });
    await sql.connect();
    const trafficSwitch = await startTrafficSwitch();
    try {
      progress(`starting the previous release ${release.tag} (${release.commit.slice(0, 12)})`);
      const old = await startGateway(dir("gw-upgrade-old-"), env(dir("gw-upgrade-old-data-")), { bin: release.bin, workers: 1 });
      await ready(old);
      const oldMigrations = (await sql.query<{ name: string }>("select name from kysely_migration order by name")).rows.map((row) => row.name);
      const token = /mgwadm_[A-Za-z0-9_-]+/.exec(
        await cli(release.bin, [
          "admin",
          "token",
          "create",
          "--name",
          "upgrade",
          ...["accounts:read", "accounts:write", "credits:write", "keys:write", "usage:read"].flatMap((scope) => ["--scope", scope]),
        ]),
      )?.[0];
      expect(token).toBeDefined();
      const oldApi = adminApi(old.baseUrl, token!);
      const accounts = await Promise.all([0, 1].map((i) => accountWithKey(oldApi, `load-${i}@example.com`, "100.00")));

      trafficSwitch.point(Number(new URL(old.baseUrl).port), "old");
      const load = startLoad(
        trafficSwitch.url,
        accounts.map((account) => account.key),
        ANSWER,
        CLIENTS,
      );
      const extra: Outcome[] = [];
      let smoke: { accountId: string; key: string } | undefined;
      try {
        await until("the previous release to serve the load", () => load.served("old") >= 20, load.outcomes);

        progress("starting this release on the same database: it migrates while the previous one serves");
        const current = await startGateway(dir("gw-upgrade-new-"), env(dir("gw-upgrade-new-data-")), { workers: 1 });
        await ready(current);
        const migrated = (await sql.query<{ name: string }>("select name from kysely_migration order by name")).rows.map((row) => row.name);
        const applied = migrated.filter((name) => !oldMigrations.includes(name));
        progress(`migrated: ${applied.length ? applied.join(", ") : "nothing"}`);
        expect(migrated.slice(0, oldMigrations.length)).toEqual(oldMigrations);

        // The previous release keeps serving on the migrated schema, the new billing functions included.
        const servedBefore = load.served("old");
        await until("the previous release to serve on the migrated schema", () => load.served("old") >= servedBefore + 20, load.outcomes);

        progress("the previous release's smoke on the migrated schema");
        // A failure here names the migrations the previous release did not survive.
        const during = `the previous release on the schema migrated by ${applied.join(", ") || "nothing"}: `;
        smoke = await accountWithKey(oldApi, "smoke@example.com", "5.00", during);
        const smokeChat = await chatOnce(old.baseUrl, smoke.key, false, ANSWER);
        expect(smokeChat, during + smokeChat.detail).toMatchObject({ ok: true, status: 200 });
        extra.push(smokeChat);
        for (const path of ["/v1/me", "/v1/usage"]) {
          const response = await fetch(`${old.baseUrl}${path}`, { headers: { authorization: `Bearer ${smoke.key}` } });
          expect(response.status, `${during}${path}: ${await response.clone().text()}`).toBe(200);
          await response.arrayBuffer();
        }
        const usage = await oldApi("GET", `/accounts/${smoke.accountId}/usage?days=1`);
        expect(usage.status, during + JSON.stringify(usage.body)).toBe(200);

        // Streams the previous release is answering when it is taken out of rotation and stopped.
        closeGate();
        await until("streams held half-way on the previous release", () => gate.held >= 2, load.outcomes);
        progress("switching traffic to this release (two streams held half-way on the previous one)");
        trafficSwitch.point(Number(new URL(current.baseUrl).port), "new");
        progress("draining the previous release (SIGTERM)");
        old.child.kill("SIGTERM");
        await sleep(1000);
        expect(old.child.exitCode, "the previous release exited with streams still open").toBeNull();
        gate.open();
        const exit = await old.exited(PHASE_DEADLINE_MS);
        expect(exit.code, old.stderr().slice(-3000)).toBe(0);
        await until("this release to serve the load", () => load.served("new") >= 20, load.outcomes);
        // A key the previous release made on the migrated schema works on this one.
        const smokeOnNew = await chatOnce(trafficSwitch.url, smoke.key, true, ANSWER);
        expect(smokeOnNew, smokeOnNew.detail).toMatchObject({ ok: true, status: 200 });
        extra.push(smokeOnNew);
        const servedAfterDrain = load.served("new");
        await until("this release to serve on", () => load.served("new") >= servedAfterDrain + 20, load.outcomes);
      } finally {
        gate.open();
        await load.stop();
      }

      const outcomes = [...load.outcomes, ...extra];
      const failed = outcomes.filter((outcome) => !outcome.ok);
      progress(`${outcomes.length} requests: ${load.served("old")} served by the previous release, ${load.served("new")} by this one, ${failed.length} failed`);
      expect(failed, `${failed.length} failed, by ${[...new Set(failed.map((outcome) => outcome.servedBy))].join(" and ")}: ${JSON.stringify(failed.slice(0, 5))}`).toEqual([]);
      expect(outcomes.filter((outcome) => outcome.stream).length).toBeGreaterThan(0);

      // The ledger: each answered request exactly once, by request id, and nothing else charged.
      const charged = (await sql.query<{ request_id: string }>("select request_id from ledger where kind = 'usage' order by request_id")).rows.map((row) => row.request_id);
      const answered = outcomes.map((outcome) => outcome.requestId!).sort();
      expect(charged).toEqual(answered);
      // Each balance is its ledger's sum (credits in, usage out), spend its usage; no hold is left.
      const { rows } = await sql.query<{ id: string; balance: string; spent: string; credits: string; debits: string; usage: string }>(`
        select a.id, a.balance_nano::text as balance, a.total_spent_nano::text as spent,
          coalesce(sum(l.cost_nano) filter (where l.kind = 'credit'), 0)::text as credits,
          coalesce(sum(l.cost_nano) filter (where l.kind = 'debit'), 0)::text as debits,
          coalesce(sum(l.cost_nano) filter (where l.kind = 'usage'), 0)::text as usage
        from accounts a left join ledger l on l.account_id = a.id group by a.id`);
      for (const account of [...accounts, smoke]) {
        const row = rows.find((candidate) => candidate.id === account.accountId)!;
        expect(BigInt(row.usage)).toBeGreaterThan(0n);
        expect(BigInt(row.balance), JSON.stringify(row)).toBe(BigInt(row.credits) - BigInt(row.debits) - BigInt(row.usage));
        expect(BigInt(row.spent), JSON.stringify(row)).toBe(BigInt(row.usage));
      }
      expect((await sql.query("select id from holds")).rows).toEqual([]);
      // The hash chain, written by both releases, verifies with this release's CLI.
      await cli(GATEWAY_BIN, ["admin", "ledger", "verify"]);
    } finally {
      await trafficSwitch.close();
      await sql.end();
    }
  });
});
