// The scheduled work of ADR 0040 on both databases: `ledger verify` every interval_s, its result in
// the metrics, and a ledger.verify_failed alert once a stored figure is edited behind the ledger's
// back; the spend report's content for a known set of requests, and the scheduler's report events
// (once per period, whichever process and however often it ticks).
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ScheduledJobs } from "../../src/pipeline/alerts/scheduled-jobs.js";
import { reportCsv, spendReport } from "../../src/pipeline/alerts/spend-report.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { alertsConfig, startReceiver, waitFor, type Receiver } from "./support.js";

const TOKEN = "metrics-token-for-the-alerts-tests";
const DAY_MS = 86_400_000;

describe.each(DATABASE_KINDS)("scheduled verify and spend reports on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let receiver: Receiver;

  beforeAll(async () => {
    mock = await startMockUpstream();
    // gpt-mock: 1000 in, 500 out at $1/$2 per M = $0.002; premium-mock at $10/$30 per M = $0.025.
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hi", { usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
    receiver = await startReceiver();
    gateway = await startGateway(`${mockConfig({ openaiUrl: mock.url, extra: alertsConfig({ verifyIntervalS: 1 }) })}\nmetrics:\n  token_env: GW_ALERTS_METRICS\n`, {
      kind,
      env: { GW_ALERTS_METRICS: TOKEN },
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await receiver?.close();
    await mock?.close();
  });

  const metric = async (name: string): Promise<number> => {
    const text = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    const line = text.split("\n").find((l) => l.startsWith(`${name} `));
    return line === undefined ? Number.NaN : Number(line.split(" ")[1]);
  };

  it("verifies the ledger on schedule and alerts when a stored figure differs from it", async () => {
    const store = gateway.app.ctx.store;
    await store.alerts.create({ workspaceId: null, url: receiver.url, format: "json", events: ["ledger.verify_failed"], description: null, createdBy: "test" });
    const { account } = await gateway.createAccount({ balance: "5" });
    await waitFor("a passing run", async () => (await metric("gateway_ledger_verify_last_ok")) === 1);
    expect(await metric("gateway_ledger_verify_last_run_timestamp_seconds")).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(receiver.received.filter((r) => r.body.includes("ledger.verify_failed"))).toHaveLength(0);

    // A balance edited with plain SQL: the ledger no longer explains it.
    await store.db
      .updateTable("accounts")
      .set((eb) => ({ balance_nano: eb("balance_nano", "+", 1n) }))
      .where("id", "=", account.id)
      .execute();
    const alert = await waitFor("the verify alert", () => receiver.received.find((r) => JSON.parse(r.body).type === "ledger.verify_failed"));
    const envelope = JSON.parse(alert.body);
    expect(envelope.data.differences).toBeGreaterThanOrEqual(1);
    expect(envelope.data.summary).toContain("stored figures differ");
    expect(await metric("gateway_ledger_verify_last_ok")).toBe(0);
    expect(await metric("gateway_ledger_verify_differences")).toBeGreaterThanOrEqual(1);
    // Put right, the next run passes again.
    await store.db
      .updateTable("accounts")
      .set((eb) => ({ balance_nano: eb("balance_nano", "-", 1n) }))
      .where("id", "=", account.id)
      .execute();
    await waitFor("a passing run again", async () => (await metric("gateway_ledger_verify_last_ok")) === 1);
  });

  it("reports an account's spend, requests, top models and keys, and sends it once per period", async () => {
    const store = gateway.app.ctx.store;
    const { account, key, raw } = await gateway.createAccount({ balance: "10", tier: "premium", monthlyBudget: "1" });
    const second = await store.keys.create({ accountId: account.id, name: "second" });
    const chat = async (keyRaw: string, model: string) => {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${keyRaw}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "Hi" }] }),
      });
      expect(response.status, await response.text()).toBe(200);
    };
    for (let i = 0; i < 3; i++) await chat(raw, "gpt-mock");
    await chat(second.raw, "premium-mock");
    const window = { from: Date.now() - 3_600_000, to: Date.now() + 60_000 };
    const report = await spendReport(store, { kind: "account", id: account.id }, "daily", window);
    expect(report).toMatchObject({
      subject: "account",
      subject_id: account.id,
      spend_usd: "0.031",
      requests: 4,
      top_models: [
        { model: "premium-mock", spend_usd: "0.025", requests: 1 },
        { model: "gpt-mock", spend_usd: "0.006", requests: 3 },
      ],
      top_keys: [
        { key_id: second.key.id, name: "second", spend_usd: "0.025", requests: 1 },
        { key_id: key.id, spend_usd: "0.006", requests: 3 },
      ],
      budgets: [{ scope: `account:${account.id}`, limit_usd: "1.00", spent_usd: "0.031" }],
    });
    expect(reportCsv(report).split("\n")[1]).toMatch(/^total,account .*,0\.031,4$/);

    // The scheduler a day later reports "yesterday" (today) once, however many ticks and processes.
    await store.alerts.create({ workspaceId: null, url: receiver.url, format: "json", events: ["report.daily"], description: null, createdBy: "test" });
    const logger = pino({ level: "silent" });
    const config = () => ({ ...gateway.app.ctx.config, ledgerVerifyIntervalMs: 0, alerts: { ...gateway.app.ctx.config.alerts, reports: true } });
    const tomorrow = () => Date.now() + DAY_MS;
    const jobs = [new ScheduledJobs({ store, logger, config, clock: tomorrow }), new ScheduledJobs({ store, logger, config, clock: tomorrow })];
    await Promise.all([...jobs.map((j) => j.tick()), ...jobs.map((j) => j.tick())]);
    await jobs[0]!.stop();
    await jobs[1]!.tick();
    await jobs[1]!.stop();
    const mine = () => receiver.received.map((r) => JSON.parse(r.body)).filter((e) => e.type === "report.daily" && e.data.subject_id === account.id);
    await waitFor("the daily report", () => mine().length > 0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mine()).toHaveLength(1);
    expect(mine()[0].data).toMatchObject({ spend_usd: "0.031", requests: 4, period: "daily" });
  });
});
