// Active health probes (issue 40, item 4): a routing group's deployment with health_check gets the
// key test's smallest request every interval, from ONE process of the gateway (the lease holder);
// a failing probe opens the deployment's breaker for every process so routing serves the other
// deployment; a passing one restores it; the results are kept (status, latency, time) and the cost
// is the operator's. The gateways' clock is moved forward to make the next probe due. On SQLite and
// PostgreSQL.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { OPERATOR_ACCOUNT_ID } from "../../src/store/operator-usage.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { probeConfig } from "../support/probe-config.js";
import { chatCompletion, json, sleep, startMockUpstream, type MockUpstream, type RecordedRequest } from "../support/mock-upstream.js";

const SCOPE = "deployment:routed/first";

const isProbe = (r: RecordedRequest) => JSON.stringify(r.body).includes("Say OK.");

describe.each(DATABASE_KINDS)("active health probes, on %s", (kind) => {
  let primary: MockUpstream;
  let backup: MockUpstream;
  let database: TestDatabase;
  let gateways: TestGateway[] = [];
  let key: string;
  let failing = false;
  let offset = 0;
  const now = () => Date.now() + offset;

  beforeAll(async () => {
    primary = await startMockUpstream();
    backup = await startMockUpstream();
    primary.handler = (_req, res) =>
      failing
        ? json(res, 503, { error: { message: "overloaded" } })
        : json(res, 200, chatCompletion("OK", { usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }));
    backup.handler = (_req, res) => json(res, 200, chatCompletion("from backup"));
    database = await createTestDatabase(kind);
    const config = probeConfig(primary.url, backup.url);
    gateways = [await startGateway(config, { database, now }), await startGateway(config, { database, now })];
    key = (await gateways[0]!.createAccount()).raw;
  });
  afterAll(async () => {
    for (const gateway of gateways) await gateway.close();
    await database?.drop();
    await primary?.close();
    await backup?.close();
  });

  const probes = () => primary.requests.filter(isProbe).length;
  const result = async () => (await gateways[0]!.app.ctx.store.healthProbes.all()).find((r) => r.scope === SCOPE);
  const within = async (ms: number, done: () => boolean | Promise<boolean>) => {
    const started = performance.now();
    while (!(await done())) {
      expect(performance.now() - started).toBeLessThan(ms);
      await sleep(25);
    }
  };
  const chat = async (gateway: TestGateway) => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "routed", messages: [{ role: "user", content: "hi" }], max_tokens: 10 }),
    });
    expect(response.status).toBe(200);
    return response.headers.get("x-gateway-deployment");
  };
  const openIn = (gateway: TestGateway) => gateway.app.ctx.pipeline.health.isOpen(SCOPE);

  it("probes once per interval from one process only, and records the result as the operator's", async () => {
    await within(4_000, async () => (await result()) !== undefined);
    expect(await result()).toMatchObject({ ok: true, status: 200, provider: "primary", model: "routed", failuresInRow: 0 });
    expect((await result())!.latencyMs).toBeGreaterThanOrEqual(0);
    expect(gateways.filter((g) => g.app.probes.holding)).toHaveLength(1);
    // Several ticks of both processes later, still one probe: not due, and the other holds no lease.
    await sleep(2_500);
    expect(probes()).toBe(1);
    const operatorRows = await gateways[0]!.app.ctx.store.db.selectFrom("ledger").select("request_id").where("account_id", "=", OPERATOR_ACCOUNT_ID).execute();
    expect(operatorRows.map((r) => r.request_id)).toEqual([expect.stringMatching(/^keytest_/)]);
    expect(await chat(gateways[1]!)).toBe("first");
  });

  it("a failing probe takes the deployment out of routing in every process; a passing one brings it back", async () => {
    failing = true;
    offset += 11_000;
    await within(4_000, async () => (await result())?.ok === false);
    expect(await result()).toMatchObject({ ok: false, status: 503, error: "HTTP 503", failuresInRow: 1 });
    expect(probes()).toBe(2);
    await within(1_500, () => gateways.every(openIn));
    const before = primary.requests.length;
    for (const gateway of gateways) expect(await chat(gateway)).toBe("second");
    expect(primary.requests.length).toBe(before);

    failing = false;
    offset += 11_000;
    await within(4_000, async () => (await result())?.ok === true);
    expect(probes()).toBe(3);
    await within(1_500, () => !gateways.some(openIn));
    for (const gateway of gateways) expect(await chat(gateway)).toBe("first");
  });

  it("is taken over by another process when the prober stops", async () => {
    const holder = gateways.find((g) => g.app.probes.holding)!;
    const other = gateways.find((g) => g !== holder)!;
    await holder.close();
    gateways = [other];
    offset += 11_000;
    await within(4_000, () => other.app.probes.holding && probes() === 4);
    expect((await result())!.ok).toBe(true);
  });
});

describe.each(DATABASE_KINDS)("the probes' lease, on %s", (kind) => {
  let database: TestDatabase;
  let gateway: TestGateway;

  beforeAll(async () => {
    database = await createTestDatabase(kind);
    gateway = await startGateway(probeConfig("http://127.0.0.1:9", "http://127.0.0.1:9").replace(/health_check: \{[^}]*\}/, ""), { database });
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
  });

  it("is taken by exactly one of several holders at once, renewed by its holder, and free once expired", async () => {
    const leases = gateway.app.ctx.store.leases;
    const at = Date.now();
    const taken = await Promise.all(["p1", "p2", "p3", "p4"].map((holder) => leases.acquire("health_probes", holder, at, at + 15_000)));
    expect(taken.filter(Boolean)).toHaveLength(1);
    const winner = `p${taken.indexOf(true) + 1}`;
    expect(await leases.acquire("health_probes", winner, at + 1_000, at + 16_000)).toBe(true);
    expect(await leases.acquire("health_probes", "late", at + 15_999, at + 30_000)).toBe(false);
    expect(await leases.acquire("health_probes", "late", at + 16_000, at + 31_000)).toBe(true);
    expect(await leases.holder("health_probes")).toEqual({ holder: "late", expiresAt: at + 31_000 });
  });

  it("refuses a probe interval under 10 s with the field's path", () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-probe-"));
    writeFileSync(join(dir, "gateway.config.yaml"), probeConfig("http://127.0.0.1:9", "http://127.0.0.1:9").replace("interval_s: 10", "interval_s: 5"));
    expect(() => loadConfig({ GATEWAY_CONFIG: join(dir, "gateway.config.yaml") }, dir)).toThrow(/models\[0\]\.deployments\[0\]\.health_check\.interval_s/);
  });
});
