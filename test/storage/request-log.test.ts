// The request log's writer (ADR 0023) on both databases: batches reach the table, a full buffer drops
// and counts (with one warning), close() writes what is buffered, pruning deletes only rows past the
// retention, in batches; and the dropped count is a metric.
import { afterEach, describe, expect, it } from "vitest";
import pino from "pino";
import { Writable } from "node:stream";
import { RequestLog } from "../../src/requestlog/request-log.js";
import { openStore, type Store } from "../../src/store/index.js";
import type { RequestLogEntry } from "../../src/store/request-log-store.js";
import { GatewayMetrics } from "../../src/observability/metrics.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig, startGateway } from "../support/gateway.js";

const DAY_MS = 86_400_000;

function entry(n: number, createdAt = Date.now()): RequestLogEntry {
  return {
    createdAt,
    requestId: `req_${String(n).padStart(32, "0")}`,
    accountId: "acct_1",
    keyId: "key_1",
    method: "POST",
    route: "/v1/chat/completions",
    model: "m".repeat(500),
    provider: "p",
    deployment: null,
    status: 200,
    errorType: "not_found",
    errorMessage: "e".repeat(2_000),
    requestedModel: "r".repeat(500),
    latencyUs: 1234,
    firstByteUs: null,
    attempts: 1,
    inputTokens: 10,
    cachedTokens: 0,
    outputTokens: 5,
    reasoningTokens: 0,
    costNano: 123_456_789_012n,
    estimated: 0,
  };
}

describe.each(DATABASE_KINDS)("request log writer on %s", (kind) => {
  let database: TestDatabase;
  let store: Store;
  const warnings: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: "warn", base: undefined },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        warnings.push(JSON.parse(chunk.toString("utf8")));
        done();
      },
    }),
  );

  async function open() {
    database = await createTestDatabase(kind);
    store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
  }
  const count = async () =>
    Number(
      (
        await store.db
          .selectFrom("request_log")
          .select((eb) => eb.fn.countAll<string | number | bigint>().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  afterEach(async () => {
    await store?.close();
    await database?.drop();
    warnings.length = 0;
  });

  it("writes batches larger than one INSERT, bounds text and keeps money exact", async () => {
    await open();
    const log = new RequestLog(store.handle, { retentionDays: 30, maxBuffered: 5_000, flushIntervalMs: 1_000 }, logger);
    for (let i = 0; i < 1_203; i++) log.append(entry(i));
    await log.flush();
    expect(log.buffered).toBe(0);
    expect(await count()).toBe(1_203);
    const row = await store.db.selectFrom("request_log").selectAll().where("request_id", "=", entry(7).requestId).executeTakeFirstOrThrow();
    expect(row.model).toHaveLength(200);
    expect(row.requested_model).toHaveLength(200);
    expect(row.error_message).toHaveLength(500);
    expect(row.cost_nano).toBe(123_456_789_012n);
    expect(log.droppedTotal).toBe(0);
    await log.close();
  });

  it("drops and counts entries past max_buffered, warns once, and exposes the count as a metric", async () => {
    await open();
    const log = new RequestLog(store.handle, { retentionDays: 30, maxBuffered: 100, flushIntervalMs: 1_000 }, logger);
    for (let i = 0; i < 150; i++) log.append(entry(i));
    expect(log.droppedTotal).toBe(50);
    await log.flush();
    expect(await count()).toBe(100);
    const dropWarnings = warnings.filter((w) => String(w.msg).startsWith("request log entries dropped"));
    expect(dropWarnings).toHaveLength(1);
    expect(dropWarnings[0]).toMatchObject({ dropped: 50, dropped_total: 50 });
    const metrics = new GatewayMetrics(
      { token: null, listen: null, accountSeriesMax: null },
      {
        breakerStates: () => ({ closed: 0, open: 0, half_open: 0 }),
        keysCoolingDown: () => 0,
        settlementRetriesPending: () => 0,
        upstreamRequestsWaiting: () => new Map(),
        holdsOutstanding: async () => 0,
        requestLogDropped: () => log.droppedTotal,
      },
    );
    expect(await metrics.expose()).toMatch(/^gateway_request_log_dropped_total 50$/m);
    await log.close();
  });

  it("close() writes what is buffered; later entries are dropped and counted", async () => {
    await open();
    const log = new RequestLog(store.handle, { retentionDays: 30, maxBuffered: 1_000, flushIntervalMs: 60_000 }, logger);
    log.start();
    for (let i = 0; i < 10; i++) log.append(entry(i));
    await log.close();
    expect(await count()).toBe(10);
    log.append(entry(11));
    expect(log.droppedTotal).toBe(1);
  });

  it("a batch the database refuses is dropped, counted and logged, and the writer goes on", async () => {
    await open();
    const log = new RequestLog(store.handle, { retentionDays: 30, maxBuffered: 1_000, flushIntervalMs: 60_000 }, logger);
    // A NOT NULL column given null: the database refuses the batch.
    log.append({ ...entry(1), requestId: null as never });
    await log.flush();
    expect(log.droppedTotal).toBe(1);
    expect(warnings.some((w) => w.msg === "writing request log entries failed; they are dropped")).toBe(true);
    log.append(entry(2));
    await log.flush();
    expect(await count()).toBe(1);
    await log.close();
  });

  it("prunes only rows older than the retention, in batches", async () => {
    await open();
    const now = Date.now();
    const log = new RequestLog(store.handle, { retentionDays: 30, maxBuffered: 5_000, flushIntervalMs: 60_000 }, logger, () => now);
    for (let i = 0; i < 2_500; i++) log.append(entry(i, now - 31 * DAY_MS - i));
    for (let i = 0; i < 20; i++) log.append(entry(10_000 + i, now - 29 * DAY_MS));
    await log.flush();
    expect(await log.prune()).toBe(2_500);
    expect(await count()).toBe(20);
    await log.close();
  });
});

describe("the request log in a running gateway", () => {
  it("exposes its dropped count at /metrics while on, and is absent (no buffer, no metric) when off", async () => {
    const metricsSection = "\nmetrics:\n  token_env: GW_TEST_METRICS_TOKEN\n";
    const env = { GW_TEST_METRICS_TOKEN: "t".repeat(24) };
    const on = await startGateway(`${mockConfig({ openaiUrl: "http://127.0.0.1:9" })}${metricsSection}`, { env });
    const off = await startGateway(`${mockConfig({ openaiUrl: "http://127.0.0.1:9" })}${metricsSection}request_log:\n  enabled: false\n`, { env });
    try {
      const scrape = async (url: string) => (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${env.GW_TEST_METRICS_TOKEN}` } })).text();
      expect(await scrape(on.url)).toMatch(/^gateway_request_log_dropped_total 0$/m);
      expect(on.app.ctx.pipeline.requestLog).not.toBeNull();
      expect(await scrape(off.url)).not.toContain("gateway_request_log_dropped_total");
      expect(off.app.ctx.pipeline.requestLog).toBeNull();
      await fetch(`${off.url}/v1/models`);
      expect(await off.app.ctx.store.db.selectFrom("request_log").selectAll().execute()).toEqual([]);
    } finally {
      await on.close();
      await off.close();
    }
  });
});
