// The soak (issue 43, item 5): the built `gateway serve` (dist/cli/main.js, as `npm start` runs it)
// on a fresh database, driven at a fixed request rate with mixed traffic for a fixed time, its RSS
// and open fds sampled throughout; after the drain, the holds and the ledger are checked against
// what the client saw. Stops by itself: the traffic ends at the deadline, in-flight requests are
// bounded by the client timeout, and every child process is killed when the run ends.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SERVER_ENV, SERVER_NODE_FLAGS } from "../../../src/cli/heap.js";
import { openStore } from "../../../src/store/index.js";
import { startChild, stopChild, sleep, waitForMessage, type Child } from "../procs.js";
import { createBenchDatabase, dropBenchDatabase, forkChild, isType, MOCK_SCRIPT } from "../servers.js";
import { checkBooks, type BooksCheck } from "./books.js";
import { sampleProcessTree, summarizeTrend, type ProcessSample, type TrendSummary } from "./sampler.js";
import { MIX, sendOne, SOAK_KINDS, type SoakClient, type SoakKind, type SoakOutcome } from "./traffic.js";

const GATEWAY_MAIN = resolve(fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url)));
const BALANCE_NANO = 900_000n * 1_000_000_000n;

export interface SoakOptions {
  seconds: number;
  rate: number;
  workers: number;
  /** PostgreSQL admin URL: the soak runs on a fresh database there; null: SQLite in a temp dir. */
  postgresAdminUrl: string | null;
  sampleEverySeconds: number;
  warmUpSeconds: number;
  log?: (line: string) => void;
}

export interface SoakResult {
  options: Omit<SoakOptions, "log">;
  database: "sqlite" | "postgres";
  startedAt: string;
  sent: number;
  byKind: Record<SoakKind, Record<string, number>>;
  unexpected: SoakOutcome[];
  failoverAttempts: number;
  samples: ProcessSample[];
  trend: TrendSummary;
  books: BooksCheck;
  /** Wall seconds from the first request to the end of the drain. */
  wallSeconds: number;
}

function configYaml(mockUrl: string): string {
  const pricing = `pricing: { input_per_mtok: "1.00", cached_input_per_mtok: "0.50", output_per_mtok: "2.00" }`;
  const model = (id: string, provider: string, upstream: string) =>
    `  - { id: ${id}, kind: chat, provider: ${provider}, upstream_model: ${upstream}, context_window: 128000, max_output_tokens: 4096, default_output_tokens: 256, ${pricing} }`;
  // Separate providers (so separate keys and circuit breakers): the failing upstream's 5xx must not
  // open the breaker of the key the rest of the traffic uses.
  return `providers:
  soakai: { type: openai, base_url: "${mockUrl}/v1", keys: ["sk-soak-good-000000000001"], apis: [chat] }
  soakfailover: { type: openai, base_url: "${mockUrl}/v1", keys: ["sk-soak-fail-000000000001", "sk-soak-good-000000000002"], apis: [chat] }
  soakbroken: { type: openai, base_url: "${mockUrl}/v1", keys: ["sk-soak-good-000000000003"], apis: [chat] }
models:
${model("gpt-soak", "soakai", "upstream-gpt")}
${model("gpt-soak-slow", "soakai", "upstream-slow")}
${model("gpt-soak-failover", "soakfailover", "upstream-gpt")}
${model("gpt-soak-broken", "soakbroken", "upstream-error")}
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
`;
}

async function waitHealthy(gateway: Child, baseUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (gateway.proc.exitCode !== null) throw new Error(`gateway exited with ${gateway.proc.exitCode}:\n${gateway.tail()}`);
    try {
      const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`gateway not healthy within 60 s:\n${gateway.tail()}`);
    await sleep(200);
  }
}

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const log = options.log ?? (() => undefined);
  const dir = mkdtempSync(join(tmpdir(), "gw-soak-"));
  const secret = randomBytes(24).toString("base64url");
  const pgDatabase = options.postgresAdminUrl ? await createBenchDatabase(options.postgresAdminUrl, "gw_soak") : null;
  const mock = forkChild("mock-upstream", MOCK_SCRIPT, {});
  let gateway: Child | null = null;
  const store = await openStore({ databaseUrl: pgDatabase?.url ?? null, sqlitePath: join(dir, "data", "gateway.db"), secret });
  try {
    const { port: mockPort } = await waitForMessage(mock, isType<{ type: "ready"; port: number }>("ready"), 30_000);
    writeFileSync(join(dir, "gateway.config.yaml"), configYaml(`http://127.0.0.1:${mockPort}`));
    const account = await store.accounts.create({ email: "soak@example.com", tier: "standard", balance: BALANCE_NANO });
    const { raw: apiKey } = await store.keys.create({ accountId: account.id });
    const revocable = await store.keys.create({ accountId: account.id });

    const port = await freePort();
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...SERVER_ENV,
      GATEWAY_CONFIG: join(dir, "gateway.config.yaml"),
      GATEWAY_DATA_DIR: join(dir, "data"),
      GATEWAY_SECRET: secret,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      DATABASE_URL: pgDatabase?.url ?? "",
    };
    gateway = startChild("gateway", process.execPath, [...SERVER_NODE_FLAGS, GATEWAY_MAIN, "serve", "--workers", String(options.workers)], { cwd: dir, env });
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitHealthy(gateway, baseUrl);
    const gatewayPid = gateway.proc.pid!;
    log(`soak: gateway pid ${gatewayPid} (${options.workers} worker(s), ${pgDatabase ? "postgres" : "sqlite"}) on ${baseUrl}, ${options.rate} req/s for ${options.seconds} s`);

    const client: SoakClient = { baseUrl, apiKey, revocable: { apiKey: revocable.raw, revokeStartedAt: null, revokedAt: null }, timeoutMs: 30_000 };
    const outcomes: SoakOutcome[] = [];
    const inFlight = new Set<Promise<void>>();
    const samples: ProcessSample[] = [];
    const t0 = Date.now();
    const sample = () => {
      const s = sampleProcessTree(gatewayPid, (Date.now() - t0) / 1000);
      if (s) samples.push({ ...s, inFlight: inFlight.size });
    };
    sample();
    const sampler = setInterval(sample, options.sampleEverySeconds * 1000);
    const revokeAt = t0 + (options.seconds * 1000) / 2;
    let revocation: Promise<void> | null = null;
    const total = Math.floor(options.seconds * options.rate);
    for (let i = 0; i < total; i++) {
      const due = t0 + (i * 1000) / options.rate;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      if (revocation === null && Date.now() >= revokeAt) {
        client.revocable.revokeStartedAt = Date.now();
        revocation = store.keys.revoke(revocable.key.id).then(() => {
          client.revocable.revokedAt = Date.now();
          log(`soak: key ${revocable.key.id} revoked at ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        });
      }
      const request = sendOne(client, MIX[i % MIX.length]!).then((outcome) => {
        outcomes.push(outcome);
        inFlight.delete(request);
      });
      inFlight.add(request);
      if (i > 0 && i % Math.max(1, Math.round(options.rate * 30)) === 0) {
        const last = samples.at(-1);
        log(`soak: ${i}/${total} sent, ${inFlight.size} in flight, RSS ${last?.rssMiB.toFixed(1)} MiB, fds ${last?.fds}`);
      }
    }
    await revocation;
    await Promise.all(inFlight);
    const wallSeconds = (Date.now() - t0) / 1000;
    sample();
    clearInterval(sampler);

    const books = await checkBooks(store, account.id, outcomes, BALANCE_NANO);
    const byKind = Object.fromEntries(SOAK_KINDS.map((k) => [k, {}])) as Record<SoakKind, Record<string, number>>;
    for (const o of outcomes) byKind[o.kind][o.outcome] = (byKind[o.kind][o.outcome] ?? 0) + 1;
    const unexpected = outcomes.filter((o) => o.outcome === "unexpected");
    const failoverAttempts = outcomes.filter((o) => o.kind === "failover" && o.attempts > 1).length;
    const { log: _log, ...shown } = options;
    void _log;
    return {
      options: shown,
      database: pgDatabase ? "postgres" : "sqlite",
      startedAt: new Date(t0).toISOString(),
      sent: outcomes.length,
      byKind,
      unexpected,
      failoverAttempts,
      samples,
      trend: summarizeTrend(samples, options.warmUpSeconds),
      books,
      wallSeconds,
    };
  } finally {
    if (gateway) await stopChild(gateway, 20_000);
    await stopChild(mock, 3_000);
    await store.close();
    if (pgDatabase && options.postgresAdminUrl) await dropBenchDatabase(options.postgresAdminUrl, pgDatabase.name);
    rmSync(dir, { recursive: true, force: true });
  }
}
