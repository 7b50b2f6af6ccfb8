// Several gateway hosts on one PostgreSQL behind HAProxy, each host in its own network namespace
// (test/deploy/netns): under steady chat load (a third of it streamed) one host is killed with
// SIGKILL, one is cut off from PostgreSQL for 10 s, and PostgreSQL restarts; then a key revoked
// and a model added through one host reach the others. Every answered request is in the ledger
// once with the cost it reported, nothing else is charged, every refusal is a catalogue error that
// came fast (straight from the cut-off host: within one database timeout), and the supervisor and
// HAProxy bring every host back. Needs root, ip, nft, haproxy and a built dist/
// (docs/operations.md#several-hosts).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOGUE } from "../../src/errors/catalogue.js";
import { openStore, type Store } from "../../src/store/index.js";
import { compareWithLedger, settledBooks } from "./netns/books.js";
import { superviseGateways, type GatewayHost, type Supervisor } from "./netns/gateway-hosts.js";
import { startHaproxy, type Haproxy } from "./netns/haproxy.js";
import { chat, startLoad, type Attempt } from "./netns/load-client.js";
import { startNetnsUpstream, type NetnsUpstream } from "./netns/mock-upstream.js";
import { createNetwork, type Network } from "./netns/network.js";
import { startPostgresHost, type PostgresHost } from "./netns/postgres-host.js";

/** How long HAProxy may take to mark a killed host down: two failed checks 500 ms apart, each up to 1 s. */
const HAPROXY_DETECTS_MS = 2_000;

/** The gateways' database timeouts in this test (DATABASE_CONNECT_TIMEOUT_MS, DATABASE_QUERY_TIMEOUT_MS). */
const CONNECT_TIMEOUT_MS = 5000;
const QUERY_TIMEOUT_MS = 5000;
/**
 * A refusal must come within the longest database wait a request can make: its billing write may
 * queue behind one group-commit batch that is waiting out the query timeout, then wait for its own
 * (connect or query timeout); plus a margin for this busy machine.
 */
const REFUSAL_BOUND_MS = 2 * QUERY_TIMEOUT_MS + CONNECT_TIMEOUT_MS + 3000;
/**
 * A request sent straight to the cut-off host waits on the database once at most (decision 0053):
 * the longer timeout, plus a margin for this busy machine.
 */
const CUT_PROBE_BOUND_MS = Math.max(CONNECT_TIMEOUT_MS, QUERY_TIMEOUT_MS) + 2000;
/** "Within a second" (docs/operations.md), with room for a loaded CI machine. */
const PROPAGATION_BOUND_MS = 3000;
const CUT_MS = 10_000;

/** An attempt as text for a failure message (its cost is a bigint). */
const show = (value: unknown) => JSON.stringify(value, (_key, field: unknown) => (typeof field === "bigint" ? field.toString() : field));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function config(upstreamUrl: string): string {
  return `catalog:
  source: database
providers:
  mock:
    type: openai
    base_url: "${upstreamUrl}/v1"
    keys: ["sk-netns-mock-key-0001"]
    apis: [chat]
models:
  - id: chat-mock
    kind: chat
    provider: mock
    upstream_model: upstream-chat
    max_output_tokens: 4096
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
`;
}

async function freePortOn(address: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, address, () => {
      const bound = server.address();
      server.close(() => resolve(typeof bound === "object" && bound ? bound.port : 0));
    });
  });
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>, describeState: () => string | Promise<string> = () => ""): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms\n${await describeState()}`);
    await sleep(100);
  }
}

async function ready(gateway: GatewayHost): Promise<boolean> {
  const response = await fetch(`${gateway.baseUrl}/readyz`, { signal: AbortSignal.timeout(1500) });
  await response.arrayBuffer();
  return response.status === 200;
}

async function adminCall(gateway: GatewayHost, token: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${gateway.baseUrl}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const answer = (await response.json()) as Record<string, unknown>;
  if (response.status >= 300) throw new Error(`${method} ${path} via ${gateway.host.name}: ${response.status} ${JSON.stringify(answer)}`);
  return answer;
}

describe("several gateway hosts behind HAProxy, on one PostgreSQL host", () => {
  it("keeps the books exact and fails fast through a host's death, a cut from the database and a database restart", { timeout: 300_000 }, async () => {
    let network: Network | undefined;
    let postgres: PostgresHost | undefined;
    let upstream: NetnsUpstream | undefined;
    let supervisor: Supervisor | undefined;
    let haproxy: Haproxy | undefined;
    let store: Store | undefined;
    const testStartedAt = Date.now();
    const dir = mkdtempSync(join(tmpdir(), "mgw-multi-host-"));
    const logs = () =>
      [haproxy ? `--- haproxy\n${haproxy.log().slice(-2000)}` : "", ...(supervisor?.hosts ?? []).map((g) => `--- ${g.host.name}\n${g.log().slice(-3000)}`)].join("\n");
    try {
      network = await createNetwork(["pg", "gw1", "gw2", "gw3"]);
      const pgHost = network.host("pg");
      postgres = await startPostgresHost(pgHost, network.gatewayAddress.replace(/\.1$/, ""));
      upstream = await startNetnsUpstream(network.gatewayAddress);
      const configPath = join(dir, "gateway.config.yaml");
      writeFileSync(configPath, config(upstream.url));
      const secret = "multi-host-test-secret-0123456789";
      const databaseUrl = postgres.url("gateway");
      store = await openStore({ databaseUrl, sqlitePath: "", secret });
      const account = await store.accounts.create({ email: "multi-host@example.com", tier: "standard", balance: 100_000_000_000n });
      const { raw: key } = await store.keys.create({ accountId: account.id });
      const { raw: adminToken } = await store.adminTokens.create({ name: "multi-host", scopes: ["keys:write", "catalog:read", "catalog:write"] });
      const before = (await store.accounts.get(account.id))!.balance;

      supervisor = superviseGateways(
        ["gw1", "gw2", "gw3"].map((name) => network!.host(name)),
        {
          DATABASE_URL: databaseUrl,
          GATEWAY_SECRET: secret,
          GATEWAY_CONFIG: configPath,
          LOG_LEVEL: "warn",
          DATABASE_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
          DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
        },
      );
      const [gw1, gw2, gw3] = supervisor.hosts as [GatewayHost, GatewayHost, GatewayHost];
      for (const gateway of supervisor.hosts) await until(`${gateway.host.name} ready`, 90_000, () => ready(gateway), logs);
      haproxy = await startHaproxy(supervisor.hosts, network.gatewayAddress, await freePortOn(network.gatewayAddress), await freePortOn(network.gatewayAddress));
      const proxy = haproxy;
      const state = async (name: string) => (await proxy.states())[name] ?? "missing";
      const allUp = async () => Object.values(await proxy.states()).filter((s) => s === "UP").length === 3;
      await until("every host UP in HAProxy", 30_000, allUp, logs);

      const load = startLoad(haproxy.url, key, 4);
      const loadStartedAt = Date.now();
      const direct: Attempt[] = [];
      await sleep(2000);

      // 1. SIGKILL one host: HAProxy routes around it, the supervisor restarts it, it serves again.
      const killedAt = Date.now();
      gw1.kill9();
      await until("gw1 restarted by the supervisor", 10_000, async () => gw1.starts === 2, logs);
      await until("gw1 ready again", 60_000, () => ready(gw1), logs);
      await until("gw1 UP again in HAProxy", 30_000, async () => (await state("gw1")) === "UP", logs);
      const killSettledAt = Date.now();
      await sleep(1000);

      // 2. gw2 loses PostgreSQL for 10 s (packets dropped both ways, the host still reachable):
      //    its requests fail fast with the catalogue's error, HAProxy drains it, it comes back.
      const cutAt = Date.now();
      await network.cut("gw2", pgHost.address);
      const probes: Promise<Attempt>[] = [];
      const probing = setInterval(() => probes.push(chat(gw2.baseUrl, "gw2 direct, cut", key, { stream: probes.length % 2 === 1 })), 500);
      const drainedAfter = await until("gw2 DOWN in HAProxy while cut", CUT_MS, async () => (await state("gw2")).startsWith("DOWN"), logs);
      await sleep(cutAt + CUT_MS - Date.now());
      clearInterval(probing);
      const healAt = Date.now();
      await network.heal("gw2");
      direct.push(...(await Promise.all(probes)));
      const healedAt = Date.now();
      const backAfterHeal = await until("gw2 UP again after the cut", 30_000, async () => (await state("gw2")) === "UP", logs);
      await sleep(1000);

      // 3. PostgreSQL restarts: requests fail fast meanwhile, every host serves again after.
      const restartAt = Date.now();
      await postgres.restart();
      const restartedAt = Date.now();
      const upAfterRestart = await until("every host UP after PostgreSQL's restart", 30_000, allUp, logs);
      await sleep(3000);

      // 4. A key revoked through gw1 is refused by gw2 and gw3; a model added through gw1 is served by them.
      const created = await adminCall(gw1, adminToken, "POST", `/accounts/${account.id}/keys`, { name: "to-revoke" });
      const second = { id: (created.key as { id: string }).id, raw: created.raw_key as string };
      for (const gateway of [gw1, gw2, gw3]) {
        const warm = await chat(gateway.baseUrl, `${gateway.host.name} direct, before revoke`, second.raw, { stream: false });
        direct.push(warm);
        expect(warm.outcome, show(warm)).toBe("answered");
      }
      await adminCall(gw1, adminToken, "POST", `/keys/${second.id}/revoke`);
      const revokedAt = Date.now();
      const revocation: Record<string, number> = {};
      for (const gateway of [gw2, gw3]) {
        await until(`revocation reaches ${gateway.host.name}`, 10_000, async () => {
          const attempt = await chat(gateway.baseUrl, `${gateway.host.name} direct, after revoke`, second.raw, { stream: false });
          direct.push(attempt);
          return attempt.errorType === "auth_error";
        });
        revocation[gateway.host.name] = Date.now() - revokedAt;
      }
      const catalog = await adminCall(gw1, adminToken, "GET", "/catalog");
      const entry = { kind: "chat", provider: "mock", upstream_model: "upstream-chat", pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" } };
      await adminCall(gw1, adminToken, "POST", "/catalog/models", { name: "chat-mock-new", entry, base_version: catalog.version });
      const addedAt = Date.now();
      const catalogReach: Record<string, number> = {};
      for (const gateway of [gw2, gw3]) {
        await until(`the new model reaches ${gateway.host.name}`, 10_000, async () => {
          const response = await fetch(`${gateway.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(2000) });
          return ((await response.json()) as { data: { id: string }[] }).data.some((model) => model.id === "chat-mock-new");
        });
        catalogReach[gateway.host.name] = Date.now() - addedAt;
      }
      await load.stop();

      // The books: settled once the load is over.
      const attempts = [...load.attempts, ...direct];
      // Cut by the kill: in flight on gw1 when it died, or sent to it by HAProxy before its checks
      // marked it down (inter 500 ms x fall 2, plus a 1 s check timeout); a connection the dying
      // host had accepted is reset, which no proxy can retry safely.
      const cutByKill = attempts.filter((a) => a.outcome === "broken" && a.startedAt <= killedAt + HAPROXY_DETECTS_MS && a.startedAt + a.latencyMs <= killSettledAt);
      const books = await settledBooks(store, account.id, cutByKill.length, 20_000);
      const holdsLeft = books.holds.map((hold) => {
        const seen = attempts.find((a) => a.requestId === hold.requestId);
        return `${hold.requestId}: ${seen ? `${seen.via} ${seen.outcome} ${seen.status} ${seen.errorType ?? ""} +${seen.startedAt - killedAt}ms` : "no answer"}`;
      });
      const summary = {
        attempts: attempts.length,
        answered: attempts.filter((a) => a.outcome === "answered").length,
        refused: attempts.filter((a) => a.outcome === "refused").length,
        cutByKill: cutByKill.length,
        drainedAfterMs: drainedAfter,
        backAfterHealMs: backAfterHeal,
        postgresRestartMs: restartedAt - restartAt,
        upAfterRestartMs: upAfterRestart,
        revocationMs: revocation,
        catalogMs: catalogReach,
        setupMs: loadStartedAt - testStartedAt,
        holdsLeft,
        upstreamRequests: upstream.requests(),
        healedAt: healedAt - cutAt,
        cutProbeMs: direct.filter((a) => a.via === "gw2 direct, cut").map((a) => `${a.status}:${a.latencyMs}`),
      };
      process.stderr.write(`multi-host: ${JSON.stringify(summary)}\n`);

      const broken = attempts.filter((a) => a.outcome === "broken" && !cutByKill.includes(a));
      expect(
        broken.map((a) => `${a.via} stream=${a.stream} +${a.startedAt - killedAt}ms ${a.latencyMs}ms: ${a.detail}`),
        logs(),
      ).toEqual([]);
      expect(cutByKill.length).toBeLessThanOrEqual(6);
      const refusals = attempts.filter((a) => a.outcome === "refused");
      for (const refusal of refusals) {
        expect(Object.keys(ERROR_CATALOGUE), show(refusal)).toContain(refusal.errorType);
        expect(refusal.requestId, show(refusal)).toMatch(/\S/);
        expect(refusal.latencyMs, show(refusal)).toBeLessThan(REFUSAL_BOUND_MS);
      }
      // The cut host's direct requests ended within one database wait: refused with the catalogue's
      // 503, or, sent less than that before the heal, answered once the cut healed.
      const cutProbes = direct.filter((a) => a.via === "gw2 direct, cut");
      expect(cutProbes.length).toBeGreaterThan(2);
      for (const probe of cutProbes) {
        expect(probe.latencyMs, show(probe)).toBeLessThan(CUT_PROBE_BOUND_MS);
        if (probe.outcome === "refused") expect([probe.status, probe.errorType], show(probe)).toEqual([503, "service_unavailable"]);
        else expect([probe.outcome, probe.startedAt > healAt - CUT_PROBE_BOUND_MS], show(probe)).toEqual(["answered", true]);
      }
      expect(refusals.filter((a) => a.errorType !== "auth_error" && a.startedAt > restartedAt + upAfterRestart + 1000)).toEqual([]);
      expect(compareWithLedger(attempts, books)).toEqual([]);
      expect(books.holds.length, holdsLeft.join("\n")).toBeLessThanOrEqual(cutByKill.length);
      expect(before - books.balance).toBe(books.usageSum);
      for (const elapsed of [...Object.values(revocation), ...Object.values(catalogReach)]) expect(elapsed).toBeLessThan(PROPAGATION_BOUND_MS);
      expect(gw1.starts).toBe(2);
    } finally {
      await store?.close().catch(() => undefined);
      await haproxy?.stop();
      await supervisor?.stop();
      await upstream?.close();
      await postgres?.stop();
      await network?.destroy();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
