// Issue 27: a newcomer's first start. The BUILT gateway, started as `npm start` starts it, in an
// empty directory with no config file: the first-start message's curl, run as printed, answers from
// the demo upstream and is billed (a ledger row, the demo credit reduced by its cost); the official
// SDKs get buffered and streamed answers on all three routes. A config that defines providers has
// no demo models unless it says `demo: true`.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_CREDIT_NOTE } from "../../src/accounts/bootstrap.js";
import { parseUsd } from "../../src/core/money.js";
import { openStore, type Store } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { buildIfStale, killAll, PROCESS_TEST_TIMEOUT_MS, startGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "./gateway-process.js";

const API_KEY = /API key:\s+(mgw_[A-Za-z0-9_-]{43})\b/;
const TRY = /^ {2}try: +(curl .+)$/m;
const CLAUDE = /^ {2}Claude Code: +(.+)$/m;
const CODEX = /^ {2}Codex: +(.+)$/m;
const DASHBOARD = /^ {2}dashboard: +(http:\/\/\S+\/dashboard)\b/m;

function sh(command: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile("sh", ["-c", command], { cwd, timeout: 20_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function models(gateway: GatewayProcess, key: string): Promise<Array<{ id: string; demo?: boolean }>> {
  const response = await fetch(`${gateway.baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(5000) });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: Array<{ id: string; demo?: boolean }> }).data;
}

beforeAll(buildIfStale, 300_000);
afterAll(() => killAll());

for (const kind of DATABASE_KINDS) {
  describe(`first start without a config, built gateway, ${kind}`, () => {
    let database: TestDatabase;
    let cwd: string;
    let gateway: GatewayProcess;
    let banner: string;
    let key: string;
    let store: Store;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      cwd = mkdtempSync(join(tmpdir(), "gw-first-"));
      gateway = await startGateway(cwd, database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}, { built: true });
      await waitUntilHealthy(gateway);
      await waitFor(
        () => CODEX.test(gateway.stderr()),
        5000,
        () => `no first-start message on stderr:\n${gateway.stderr()}`,
      );
      banner = gateway.stderr();
      key = API_KEY.exec(banner)![1]!;
      store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: join(cwd, "data", "gateway.db"), secret: "unused-for-this-check" });
    }, PROCESS_TEST_TIMEOUT_MS);
    afterAll(async () => {
      await store?.close();
      gateway?.child.kill("SIGTERM");
      await gateway?.exited(15_000).catch(() => undefined);
      rmSync(cwd, { recursive: true, force: true });
      await database?.drop();
    });

    async function ledger() {
      const account = (await store.accounts.getByEmail("admin@localhost"))!;
      const rows = await store.handle.db.selectFrom("ledger").selectAll().where("account_id", "=", account.id).orderBy("id").execute();
      return { account: (await store.accounts.get(account.id))!, rows };
    }

    it("prints the dashboard, a curl, and Claude Code and Codex lines for the demo models", () => {
      expect(banner).toMatch(/No config file: serving the built-in demo models \(demo-chat, demo-fast\)/);
      expect(DASHBOARD.exec(banner)?.[1]).toBe(`${gateway.baseUrl}/dashboard`);
      expect(TRY.exec(banner)?.[1]).toContain(`${gateway.baseUrl}/v1/chat/completions`);
      const claude = CLAUDE.exec(banner)?.[1] ?? "";
      expect(claude).toContain(`ANTHROPIC_BASE_URL=${gateway.baseUrl} `);
      expect(claude).toContain(`ANTHROPIC_API_KEY=${key} `);
      expect(claude).toMatch(/ANTHROPIC_MODEL=demo-chat .*claude -p /);
      const codex = CODEX.exec(banner)?.[1] ?? "";
      expect(codex).toContain(`GATEWAY_API_KEY=${key} codex exec`);
      expect(codex).toContain(`base_url="${gateway.baseUrl}/v1"`);
      expect(codex).toContain("-m demo-chat");
    });

    it("gives the administrator the demo credit as a ledger credit row", async () => {
      const { account, rows } = await ledger();
      expect(rows[0]).toMatchObject({ kind: "credit", note: DEMO_CREDIT_NOTE });
      expect(BigInt(rows[0]!.cost_nano)).toBe(parseUsd("5.00"));
      expect(account.balance).toBe(parseUsd("5.00"));
    });

    it("lists the demo models as demo in /v1/models and /v1/catalog", async () => {
      expect(await models(gateway, key)).toEqual([expect.objectContaining({ id: "demo-chat", demo: true }), expect.objectContaining({ id: "demo-fast", demo: true })]);
      const catalog = (await (await fetch(`${gateway.baseUrl}/v1/catalog`)).json()) as { data: Array<{ id: string; demo?: boolean; pricing: Record<string, string> }> };
      expect(catalog.data.map((m) => [m.id, m.demo])).toEqual([
        ["demo-chat", true],
        ["demo-fast", true],
      ]);
      expect(catalog.data[0]!.pricing.output_per_million_tokens).toBe("1.50");
    });

    it("runs the printed curl as printed: 200, an answer, a ledger row, the balance reduced by its cost", async () => {
      const before = await ledger();
      const { code, stdout, stderr } = await sh(TRY.exec(banner)![1]!, cwd);
      expect(code, stderr).toBe(0);
      const answer = JSON.parse(stdout) as {
        model: string;
        choices: Array<{ message: { content: string } }>;
        usage: { prompt_tokens: number; completion_tokens: number; cost: string };
      };
      expect(answer.model).toBe("demo-chat");
      expect(answer.choices[0]!.message.content).toContain("demo");
      expect(answer.choices[0]!.message.content).toContain("Hello, gateway!");
      // demo-chat: 0.50 USD input, 1.50 USD output per million tokens.
      const priced = (BigInt(answer.usage.prompt_tokens) * 500_000_000n + BigInt(answer.usage.completion_tokens) * 1_500_000_000n + 999_999n) / 1_000_000n;
      expect(priced).toBeGreaterThan(0n);
      expect(parseUsd(answer.usage.cost)).toBe(priced);
      let after = before;
      await waitFor(
        async () => (after = await ledger()).rows.length > before.rows.length,
        5000,
        () => "no ledger row for the curl",
      );
      const row = after.rows.at(-1)!;
      expect(row).toMatchObject({ kind: "usage", model: "demo-chat", provider: "demo" });
      expect(BigInt(row.cost_nano)).toBe(priced);
      expect(Number(row.input_tokens)).toBe(answer.usage.prompt_tokens);
      expect(Number(row.output_tokens)).toBe(answer.usage.completion_tokens);
      expect(after.account.balance).toBe(before.account.balance - priced);
    });

    it("answers the official SDKs on all three routes, buffered and streamed, each billed", async () => {
      const before = await ledger();
      const openai = new OpenAI({ baseURL: `${gateway.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
      const anthropic = new Anthropic({ baseURL: gateway.baseUrl, apiKey: key, maxRetries: 0 });
      const prompt = "Tell me about the gateway";

      const chat = await openai.chat.completions.create({ model: "demo-fast", messages: [{ role: "user", content: prompt }] });
      expect(chat.choices[0]!.message.content).toContain("demo-fast, the built-in demo");
      let chatText = "";
      for await (const chunk of await openai.chat.completions.create({ model: "demo-chat", messages: [{ role: "user", content: prompt }], stream: true })) {
        chatText += chunk.choices[0]?.delta.content ?? "";
      }
      expect(chatText).toContain("demo-chat, the built-in demo");

      const responses = await openai.responses.create({ model: "demo-fast", input: prompt });
      expect(responses.output_text).toContain("the built-in demo");
      let responsesText = "";
      for await (const event of await openai.responses.create({ model: "demo-chat", input: prompt, stream: true })) {
        if (event.type === "response.output_text.delta") responsesText += event.delta;
      }
      expect(responsesText).toContain("the built-in demo");

      const message = await anthropic.messages.create({ model: "demo-fast", max_tokens: 512, messages: [{ role: "user", content: prompt }] });
      expect(message.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("the built-in demo") });
      const streamed = await anthropic.messages.stream({ model: "demo-chat", max_tokens: 512, messages: [{ role: "user", content: prompt }] }).finalMessage();
      expect(streamed.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("the built-in demo") });
      expect(streamed.usage.output_tokens).toBeGreaterThan(0);

      let after = before;
      await waitFor(
        async () => (after = await ledger()).rows.length >= before.rows.length + 6,
        5000,
        () => "not every SDK call has its ledger row",
      );
      const usage = after.rows.slice(before.rows.length);
      expect(usage.map((r) => r.kind)).toEqual(Array(6).fill("usage"));
      const spent = usage.reduce((sum, r) => sum + BigInt(r.cost_nano), 0n);
      expect(spent).toBeGreaterThan(0n);
      expect(after.account.balance).toBe(before.account.balance - spent);
    });
  });
}

describe("a config file and the demo catalog (built gateway)", () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function startWith(config: string): Promise<{ gateway: GatewayProcess; key: string }> {
    const cwd = mkdtempSync(join(tmpdir(), "gw-first-cfg-"));
    dirs.push(cwd);
    writeFileSync(join(cwd, "gateway.config.yaml"), config);
    const gateway = await startGateway(cwd, {}, { built: true });
    await waitUntilHealthy(gateway);
    await waitFor(
      () => API_KEY.test(gateway.stderr()),
      5000,
      () => gateway.stderr(),
    );
    return { gateway, key: API_KEY.exec(gateway.stderr())![1]! };
  }

  const providers = `providers:
  upstream:
    type: openai
    base_url: http://127.0.0.1:9/v1
    keys: ["sk-test"]
models:
  - id: real-model
    kind: chat
    provider: upstream
`;

  it("defines providers: no demo models are listed, no demo credit, no demo lines", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const { gateway, key } = await startWith(providers);
    try {
      expect((await models(gateway, key)).map((m) => m.id)).toEqual(["real-model"]);
      expect(gateway.stderr()).not.toMatch(/demo/);
    } finally {
      gateway.child.kill("SIGTERM");
      await gateway.exited(15_000);
    }
  });

  it("defines providers and demo: true: the demo models are listed beside them", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
    const { gateway, key } = await startWith(`demo: true\n${providers}`);
    try {
      expect((await models(gateway, key)).map((m) => [m.id, m.demo ?? false])).toEqual([
        ["real-model", false],
        ["demo-chat", true],
        ["demo-fast", true],
      ]);
      expect(CODEX.test(gateway.stderr())).toBe(true);
    } finally {
      gateway.child.kill("SIGTERM");
      await gateway.exited(15_000);
    }
  });
});
