// Starts a real gateway (the same createApp as `gateway serve`) on 127.0.0.1 with a random port,
// against a fresh database and a config written for the test. Log lines are captured for assertions.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config/load.js";
import { parseUsd } from "../../src/core/money.js";
import type { Account } from "../../src/store/accounts-store.js";
import type { ApiKey } from "../../src/store/keys-store.js";
import { createTestDatabase, type TestDatabase } from "./databases.js";

export interface TestGateway {
  url: string;
  app: App;
  /** The config file the gateway loaded; a test may rewrite it and reload (app.reloadConfig re-reads it). */
  configPath: string;
  database: TestDatabase;
  logs: Array<Record<string, unknown>>;
  createAccount(options?: {
    balance?: string;
    tier?: string;
    email?: string;
    budgetCap?: string;
    tokenCap?: number;
    monthlyBudget?: string;
    monthlyTokenBudget?: number;
  }): Promise<{ account: Account; key: ApiKey; raw: string }>;
  close(): Promise<void>;
}

let counter = 0;

export async function startGateway(
  configYaml: string,
  options: { kind?: "sqlite" | "postgres"; env?: Record<string, string>; database?: TestDatabase; now?: () => number } = {},
): Promise<TestGateway> {
  const database = options.database ?? (await createTestDatabase(options.kind ?? "sqlite"));
  const dir = mkdtempSync(join(tmpdir(), "gw-cfg-"));
  const configPath = join(dir, "gateway.config.yaml");
  writeFileSync(configPath, configYaml);
  const env = { ...database.env, ...options.env, GATEWAY_CONFIG: configPath, PORT: "0", LOG_LEVEL: "info" };
  const config = loadConfig(env, dir);
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line) logs.push(JSON.parse(line));
      done();
    },
  });
  const app = await createApp(config, {
    logger: pino({ level: "info", base: undefined }, sink),
    ...(options.now && { now: options.now }),
    // As `gateway serve` does: a reload reads the same file with the same environment.
    reload: () => loadConfig(env, dir),
  });
  const address = await app.server.listen({ host: "127.0.0.1", port: 0 });
  return {
    url: address,
    app,
    configPath,
    database,
    logs,
    async createAccount(o = {}) {
      counter += 1;
      const account = await app.ctx.store.accounts.create({
        email: o.email ?? `user${counter}-${Date.now()}@example.com`,
        tier: o.tier ?? config.defaultTier,
        balance: parseUsd(o.balance ?? "100")!,
        monthlyBudget: o.monthlyBudget ? parseUsd(o.monthlyBudget) : null,
        monthlyTokenBudget: o.monthlyTokenBudget ?? null,
      });
      const { key, raw } = await app.ctx.store.keys.create({
        accountId: account.id,
        budgetCap: o.budgetCap ? parseUsd(o.budgetCap) : null,
        tokenCap: o.tokenCap ?? null,
      });
      return { account, key, raw };
    },
    async close() {
      await app.close();
      if (!options.database) await database.drop();
    },
  };
}

/** A config with one OpenAI-compatible and one Anthropic-native provider pointing at mocks. */
export function mockConfig(options: { openaiUrl: string; anthropicUrl?: string; openaiKeys?: string[]; anthropicKeys?: string[]; extra?: string }): string {
  const openaiKeys = options.openaiKeys ?? ["sk-mock-openai-key-0001"];
  const anthropicKeys = options.anthropicKeys ?? ["sk-ant-mock-key-0001"];
  return `
providers:
  mockai:
    type: openai
    base_url: "${options.openaiUrl}/v1"
    keys: ${JSON.stringify(openaiKeys)}
    apis: [chat]
  mockanthropic:
    type: anthropic
    base_url: "${options.anthropicUrl ?? options.openaiUrl}"
    keys: ${JSON.stringify(anthropicKeys)}
models:
  - id: gpt-mock
    kind: chat
    provider: mockai
    upstream_model: upstream-gpt
    context_window: 128000
    max_output_tokens: 4096
    default_output_tokens: 1000
    pricing: { input_per_mtok: "1.00", cached_input_per_mtok: "0.50", output_per_mtok: "2.00" }
  - id: claude-mock
    kind: chat
    provider: mockanthropic
    upstream_model: claude-upstream
    max_output_tokens: 8192
    default_output_tokens: 1000
    pricing: { input_per_mtok: "3.00", cached_input_per_mtok: "0.30", output_per_mtok: "15.00" }
  - id: premium-mock
    kind: chat
    provider: mockai
    pricing: { input_per_mtok: "10", output_per_mtok: "30" }
${options.extra ?? ""}
tiers:
  standard: { models: [gpt-mock, claude-mock] }
  premium: { models: ["*"] }
server:
  default_tier: standard
`;
}
