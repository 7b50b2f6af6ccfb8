// `gateway serve --workers 2` as a real child process, on each database: a worker killed with SIGKILL
// mid-stream is replaced, its holds are released by a live worker's sweeper once its liveness has run
// out (ADR 0054; the lease shortened to HOLD_LIVENESS_MS for the test) and every finished stream is charged
// exactly once; SIGTERM drains every worker; SIGHUP reloads every worker as one recorded reload; a
// worker that cannot listen fails the start. (The billing race with two workers: test/gateway/concurrency.test.ts.)
import { createHash } from "node:crypto";
import { request } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatStream, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { freePort, killAll, READY_DEADLINE_MS, startGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "./gateway-process.js";
import { TEST_HOLD_LIVENESS_VARIABLE } from "../../src/cli/serve-common.js";

/** The liveness lease and sweep interval the kill test serves with: a dead worker's holds are back within twice this. */
const HOLD_LIVENESS_MS = 2_000;

afterAll(() => killAll());

interface Stream {
  requestId: string;
  /** Resolves after the first chunk of the body. */
  started: Promise<void>;
  /** The whole body, and whether the connection broke before its end. */
  ended: Promise<{ text: string; broken: boolean }>;
}

/** A streamed chat completion on a connection of its own (agent: false), so that round-robin spreads them over the workers. */
function openStream(baseUrl: string, apiKey: string): Promise<Stream> {
  const body = JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "x" }], stream: true, stream_options: { include_usage: true } });
  return new Promise((resolve, reject) => {
    const req = request(
      `${baseUrl}/v1/chat/completions`,
      { method: "POST", agent: false, headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" }, timeout: 20_000 },
      (res) => {
        if (res.statusCode !== 200) return reject(new Error(`stream answered ${res.statusCode}`));
        let text = "";
        let onFirst: () => void;
        const started = new Promise<void>((r) => (onFirst = r));
        const ended = new Promise<{ text: string; broken: boolean }>((done) => {
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            text += chunk;
            onFirst();
          });
          res.on("end", () => done({ text, broken: !res.complete }));
          res.on("error", () => done({ text, broken: true }));
          res.on("aborted", () => done({ text, broken: true }));
        });
        resolve({ requestId: String(res.headers["x-request-id"]), started, ended });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Streams opened one after the other, each under way before the next: round-robin then alternates
 * between the workers (opened at once, a worker still busy taking one connection can leave the next
 * ones to the other).
 */
async function openStreamsInTurn(baseUrl: string, apiKey: string, count: number): Promise<Stream[]> {
  const streams: Stream[] = [];
  for (let i = 0; i < count; i++) {
    const stream = await openStream(baseUrl, apiKey);
    await stream.started;
    streams.push(stream);
  }
  return streams;
}

/** Every worker listens once the primary has printed its start-up lines (GET /healthz answers as soon as one does). */
async function waitUntilServing(gateway: GatewayProcess): Promise<void> {
  await waitUntilHealthy(gateway);
  await waitFor(
    () => gateway.stderr().includes("model-gateway listening"),
    READY_DEADLINE_MS,
    () => `no start-up lines:\n${gateway.stderr()}`,
  );
}

/** The pids the primary printed for its workers ("worker N (pid P) listening"), by worker id. */
function workerPids(gateway: GatewayProcess): Map<number, number> {
  return new Map([...gateway.stderr().matchAll(/^worker (\d+) \(pid (\d+)\) listening$/gm)].map((m) => [Number(m[1]), Number(m[2])]));
}

interface Setup {
  database: TestDatabase;
  mock: MockUpstream;
  dir: string;
  env: Record<string, string>;
  store: Store;
  close(): Promise<void>;
}

async function setUp(kind: "sqlite" | "postgres", words: number, extraEnv: Record<string, string> = {}): Promise<Setup> {
  const mock = await startMockUpstream();
  mock.handler = (req, res) =>
    chatStream(
      req,
      res,
      Array.from({ length: words }, (_, i) => `w${i} `),
      { delayMs: 100 },
    );
  const database = await createTestDatabase(kind);
  const dir = mkdtempSync(join(tmpdir(), "gw-workers-"));
  writeFileSync(join(dir, "gateway.config.yaml"), mockConfig({ openaiUrl: mock.url }));
  const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
  return {
    database,
    mock,
    dir,
    env: { ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml"), ...extraEnv },
    store,
    close: async () => {
      killAll();
      await store.close();
      await mock.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function usageCharges(store: Store, accountId: string): Promise<Map<string, bigint>> {
  const rows = await store.db.selectFrom("ledger").select(["request_id", "cost_nano"]).where("account_id", "=", accountId).where("kind", "=", "usage").execute();
  const charges = new Map<string, bigint>();
  for (const row of rows) {
    expect(charges.has(row.request_id), `request ${row.request_id} charged twice`).toBe(false);
    charges.set(row.request_id, BigInt(row.cost_nano));
  }
  return charges;
}

for (const kind of DATABASE_KINDS) {
  describe(`gateway serve --workers 2 on ${kind}`, () => {
    it("replaces a worker killed mid-stream; a live worker releases its holds once its liveness ran out; each finished stream is charged once", { timeout: 120_000 }, async () => {
      const setup = await setUp(kind, 30, { [TEST_HOLD_LIVENESS_VARIABLE]: String(HOLD_LIVENESS_MS) });
      const START = 1_000_000_000n;
      const account = await setup.store.accounts.create({ email: `sigkill-${kind}@example.com`, tier: "standard", balance: START });
      const { raw } = await setup.store.keys.create({ accountId: account.id });
      try {
        const gateway = await startGateway(setup.dir, setup.env, { workers: 2 });
        await waitUntilServing(gateway);
        expect(workerPids(gateway).size).toBe(2);
        const streams = await openStreamsInTurn(gateway.baseUrl, raw, 4);
        const victim = workerPids(gateway).get(1)!;
        // Every hold in flight names its worker's liveness row; two workers, two rows.
        const holders = new Set((await setup.store.db.selectFrom("holds").select("holder").where("account_id", "=", account.id).execute()).map((h) => h.holder));
        expect(holders.size).toBe(2);
        expect(holders.has(null)).toBe(false);
        process.kill(victim, "SIGKILL");
        const killedAt = Date.now();
        // The dead worker's holds do not wait for their 15-minute expiry: once its liveness row has run
        // out (the lease), a live worker's next sweep gives their reservation back. Timed from the kill
        // (the holds taken before it: the live worker's own streams end within 3 s); the bound is the
        // lease and one sweep, with room for a loaded machine.
        const releaseBound = HOLD_LIVENESS_MS * 2 + 8_000;
        const holdsBeforeKill = () => setup.store.db.selectFrom("holds").select("id").where("account_id", "=", account.id).where("created_at", "<=", BigInt(killedAt)).execute();
        const releasedIn = waitFor(
          async () => (await holdsBeforeKill()).length === 0,
          releaseBound,
          () => `the killed worker's holds were not released within ${releaseBound / 1000}s of its death`,
        ).then(
          () => Date.now() - killedAt,
          (error: unknown) => error as Error,
        );
        const ends = await Promise.all(streams.map((s) => s.ended));
        const finished = streams.filter((_, i) => !ends[i]!.broken && ends[i]!.text.trimEnd().endsWith("data: [DONE]"));
        const broken = streams.filter((_, i) => ends[i]!.broken);
        // The killed worker's streams broke, the other's finished (round-robin: normally two each).
        expect(finished.length + broken.length).toBe(4);
        expect(finished.length).toBeGreaterThanOrEqual(1);
        expect(broken.length).toBeGreaterThanOrEqual(1);

        // The primary starts a replacement, which serves.
        await waitFor(
          () => /^worker 3 \(pid \d+\) listening$/m.test(gateway.stderr()),
          10_000,
          () => `no replacement worker:\n${gateway.stderr()}`,
        );
        expect(gateway.stderr()).toMatch(new RegExp(`^worker 1 \\(pid ${victim}\\) exited with signal SIGKILL; starting a replacement in \\d+ ms$`, "m"));
        const after = await Promise.all(Array.from({ length: 2 }, () => openStream(gateway.baseUrl, raw)));
        const afterEnds = await Promise.all(after.map((s) => s.ended));
        for (const end of afterEnds) expect(end.broken).toBe(false);

        const released = await releasedIn;
        if (released instanceof Error) throw released;
        expect(released).toBeLessThan(releaseBound);
        await waitFor(
          async () => (await setup.store.accounts.get(account.id))!.held === 0n,
          10_000,
          () => "holds left after the last streams",
        );
        const keys = await setup.store.keys.listByAccount(account.id);
        expect(keys.map((k) => k.held)).toEqual([0n]);

        // Every finished stream charged exactly once, the broken ones not at all, and the books balance.
        const charges = await usageCharges(setup.store, account.id);
        expect([...charges.keys()].sort()).toEqual([...finished, ...after].map((s) => s.requestId).sort());
        const total = [...charges.values()].reduce((sum, cost) => sum + cost, 0n);
        const final = (await setup.store.accounts.get(account.id))!;
        expect(final.totalSpent).toBe(total);
        expect(START - final.balance).toBe(total);
        expect(keys[0]!.spent).toBe(total);
        expect(await setup.store.db.selectFrom("holds").select("id").where("account_id", "=", account.id).execute()).toEqual([]);

        gateway.child.kill("SIGTERM");
        expect(await gateway.exited(20_000)).toEqual({ code: 0, signal: null });
      } finally {
        await setup.close();
      }
    });

    it("drains every worker on SIGTERM (also signalled twice): streams in flight finish and are charged, new connections are refused, exit 0", { timeout: 120_000 }, async () => {
      const setup = await setUp(kind, 15);
      const account = await setup.store.accounts.create({ email: `drain-${kind}@example.com`, tier: "standard", balance: 1_000_000_000n });
      const { raw } = await setup.store.keys.create({ accountId: account.id });
      try {
        const gateway = await startGateway(setup.dir, setup.env, { workers: 2 });
        await waitUntilServing(gateway);
        const streams = await openStreamsInTurn(gateway.baseUrl, raw, 4);
        expect(await setup.store.db.selectFrom("gateway_processes").select("holder").execute()).toHaveLength(2);
        gateway.child.kill("SIGTERM");
        // As a service manager or `timeout` does, the whole process group is signalled too: each
        // worker then gets SIGTERM twice (its own and the primary's) and must keep draining.
        // (Apart in time: two signals pending at once would merge into one.)
        await new Promise((resolve) => setTimeout(resolve, 150));
        for (const pid of workerPids(gateway).values()) process.kill(pid, "SIGTERM");
        await new Promise((resolve) => setTimeout(resolve, 150));
        await expect(fetch(`${gateway.baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
        const ends = await Promise.all(streams.map((s) => s.ended));
        for (const end of ends) {
          expect(end.broken, `${end.text.slice(-300)}\n${gateway.stderr()}`).toBe(false);
          expect(end.text).toContain("w14 ");
          expect(end.text.trimEnd().endsWith("data: [DONE]")).toBe(true);
        }
        expect(await gateway.exited(20_000)).toEqual({ code: 0, signal: null });
        expect(gateway.stderr()).toContain("SIGTERM: no new connections; waiting up to 30s for requests in flight in 2 workers\n");
        expect(gateway.stderr()).toContain("all workers drained\n");
        // Both workers served (the log's worker field) and wrote their lines before exiting.
        const logged = gateway
          .stdout()
          .split("\n")
          .filter((line) => line.includes('"path":"/v1/chat/completions"'))
          .map((line) => JSON.parse(line) as { worker: number; request_id: string });
        expect(new Set(logged.map((line) => line.worker))).toEqual(new Set([1, 2]));
        expect(logged.map((line) => line.request_id).sort()).toEqual(streams.map((s) => s.requestId).sort());
        const charges = await usageCharges(setup.store, account.id);
        expect([...charges.keys()].sort()).toEqual(streams.map((s) => s.requestId).sort());
        expect((await setup.store.accounts.get(account.id))!.held).toBe(0n);
        // Each worker removed its liveness row once its holds were settled (ADR 0054).
        expect(await setup.store.db.selectFrom("gateway_processes").select("holder").execute()).toEqual([]);
      } finally {
        await setup.close();
      }
    });

    it("prints the first start once; SIGHUP reloads every worker as one recorded reload", { timeout: 120_000 }, async () => {
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), "gw-workers-hup-"));
      const path = join(dir, "gateway.config.yaml");
      const config = (price: string) =>
        `providers:\n  upstream:\n    type: openai\n    base_url: http://127.0.0.1:9/v1\n    keys: ["sk-never-called-0001"]\nmodels:\n  - id: model-a\n    kind: chat\n    provider: upstream\n    pricing: { input_per_mtok: "${price}", output_per_mtok: "2.00" }\n`;
      const sha = (text: string) => createHash("sha256").update(text).digest("hex");
      try {
        writeFileSync(path, config("1.00"));
        const gateway = await startGateway(dir, { ...database.env, GATEWAY_CONFIG: path }, { workers: 2 });
        await waitUntilServing(gateway);
        // The first-start message follows the listening line (possibly in a later chunk of the pipe).
        await waitFor(
          () => gateway.stderr().includes("First start: created an administrator account"),
          10_000,
          () => gateway.stderr(),
        );
        expect(gateway.stderr()).toMatch(/^model-gateway listening on http:\/\/127\.0\.0\.1:\d+ \((sqlite|postgres).*; 2 workers\)$/m);

        writeFileSync(path, config("3.00"));
        gateway.child.kill("SIGHUP");
        const line = `SIGHUP: config reloaded: ${sha(config("1.00")).slice(0, 12)} -> ${sha(config("3.00")).slice(0, 12)} (models +0 -0 ~1, providers +0 -0 ~0) (all 2 workers)\n`;
        await waitFor(
          () => gateway.stderr().includes(line),
          15_000,
          () => `no combined reload line:\n${gateway.stderr()}`,
        );
        // Every connection, whichever worker takes it, sees the new config.
        const versions = async () =>
          Promise.all(
            Array.from({ length: 4 }, async () => {
              const ready = await new Promise<string>((resolve, reject) => {
                request(`${gateway.baseUrl}/readyz`, { agent: false }, (res) => {
                  let text = "";
                  res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
                  res.on("end", () => resolve(text));
                })
                  .on("error", reject)
                  .end();
              });
              return (JSON.parse(ready) as { config: { version: string } }).config.version;
            }),
          );
        expect(await versions()).toEqual(Array(4).fill(sha(config("3.00"))));

        // The admin API's reload reaches one worker; the primary has the other follow it.
        const admin = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
        const adminToken = (await admin.adminTokens.create({ name: "reload", scopes: ["config:write"] })).raw;
        await admin.close();
        writeFileSync(path, config("5.00"));
        const response = await fetch(`${gateway.baseUrl}/admin/v1/config/reload`, {
          method: "POST",
          headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
          body: "{}",
          signal: AbortSignal.timeout(15_000),
        });
        expect(response.status).toBe(200);
        await waitFor(
          () => /^config reloaded through the admin API by worker \d+ \(\w{12}\)\n {2}worker \d+: config reloaded: /m.test(gateway.stderr()),
          15_000,
          () => `the other worker did not follow:\n${gateway.stderr()}`,
        );
        expect(await versions()).toEqual(Array(4).fill(sha(config("5.00"))));
        gateway.child.kill("SIGTERM");
        expect(await gateway.exited(20_000)).toEqual({ code: 0, signal: null });
        // Once, by the primary, however many workers started.
        expect(gateway.stderr().match(/First start: created an administrator account/g)).toHaveLength(1);
        const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
        try {
          // One row per reload, not one per worker.
          const rows = await store.db.selectFrom("audit_log").selectAll().where("action", "=", "config.reload").orderBy("id").execute();
          expect(rows).toHaveLength(2);
          expect(rows[0]).toMatchObject({ actor_type: "cli", actor_name: "SIGHUP", target_id: path });
          expect(rows[1]).toMatchObject({ actor_type: "admin_token", target_id: path });
        } finally {
          await store.close();
        }
      } finally {
        killAll();
        rmSync(dir, { recursive: true, force: true });
        await database.drop();
      }
    });
  });
}

it("fails the start, exit 1, when the workers cannot listen", { timeout: 120_000 }, async () => {
  const database = await createTestDatabase("sqlite");
  const dir = mkdtempSync(join(tmpdir(), "gw-workers-busy-"));
  const port = await freePort();
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(port, "127.0.0.1", resolve));
  try {
    const gateway = await startGateway(dir, database.env, { workers: 2, port });
    const exit = await gateway.exited(30_000);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(gateway.stderr()).toMatch(/EADDRINUSE/);
    expect(gateway.stderr()).toMatch(/^gateway: worker \d+ exited with code 1 before listening/m);
    expect(gateway.stderr()).not.toContain("model-gateway listening");
  } finally {
    killAll();
    await new Promise((resolve) => taken.close(resolve));
    rmSync(dir, { recursive: true, force: true });
    await database.drop();
  }
});

it("stops a crash loop: replacements that cannot start end the gateway with exit 1 and the reason", { timeout: 80_000 }, async () => {
  const database = await createTestDatabase("sqlite");
  const dir = mkdtempSync(join(tmpdir(), "gw-workers-loop-"));
  const path = join(dir, "gateway.config.yaml");
  writeFileSync(path, "models: []\n");
  try {
    const gateway = await startGateway(dir, { ...database.env, GATEWAY_CONFIG: path }, { workers: 2 });
    await waitUntilServing(gateway);
    // A file that no longer loads: every replacement worker exits at start (code 1, the config error).
    writeFileSync(path, "models: [\n");
    process.kill(workerPids(gateway).get(1)!, "SIGKILL");
    // Five replacements with a doubling delay (250 ms to 4 s: 7.75 s), then the sixth exit stops it.
    const exit = await gateway.exited(60_000);
    expect(exit).toEqual({ code: 1, signal: null });
    const stderr = gateway.stderr();
    expect(stderr.match(/starting a replacement in \d+ ms$/gm)).toEqual([250, 500, 1000, 2000, 4000].map((ms) => `starting a replacement in ${ms} ms`));
    expect(stderr).toMatch(/^gateway: config: .*gateway\.config\.yaml/m);
    expect(stderr).toMatch(/^gateway: worker crash loop: more than 5 restarts within a minute \(the last: worker 7 exited with code 1\); stopping the gateway$/m);
    // The healthy worker was drained, not killed.
    expect(stderr).not.toMatch(/worker 2 exited with .* while draining/);
  } finally {
    killAll();
    rmSync(dir, { recursive: true, force: true });
    await database.drop();
  }
});
