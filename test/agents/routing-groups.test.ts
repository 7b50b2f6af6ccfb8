// Claude Code and Codex through a routing group whose first deployment is down (its port refuses
// connections): every request falls over to the second deployment, the agents never notice.
// Claude Code's group falls from an OpenAI-type deployment (Messages→Chat bridge) to an Anthropic
// one (native), so each attempted deployment is planned for its own provider.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { anthropicStream, chatStream, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { claudeBinary, codexLauncher, describeRun, isolatedEnv, recordGatewayRequests, runAgent, startProxyTrap, tempDir, type ProxyTrap, type SeenRequest } from "./support.js";

const RUN_TIMEOUT_MS = 90_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;

/** A loopback port nothing listens on: connections to it are refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("coding agents through a routing group whose first deployment is down", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let proxy: ProxyTrap;
  let seen: SeenRequest[];
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const down = await closedPort();
    gateway = await startGateway(`
providers:
  down: { type: openai, base_url: "http://127.0.0.1:${down}/v1", keys: [sk-down-key-000000000000], apis: [chat] }
  mockai: { type: openai, base_url: "${mock.url}/v1", keys: [sk-mock-openai-key-0001], apis: [chat] }
  mockanthropic: { type: anthropic, base_url: "${mock.url}", keys: [sk-ant-mock-key-0001] }
models:
  - id: routed-claude
    kind: chat
    max_output_tokens: 8192
    pricing: { input_per_mtok: "3", output_per_mtok: "15" }
    deployments:
      - { name: primary, provider: down, upstream_model: down-model }
      - { name: fallback, provider: mockanthropic, upstream_model: claude-upstream }
  - id: routed-gpt
    kind: chat
    max_output_tokens: 4096
    pricing: { input_per_mtok: "1", output_per_mtok: "2" }
    deployments:
      - { name: primary, provider: down, upstream_model: down-model }
      - { name: fallback, provider: mockai, upstream_model: upstream-gpt }
`);
    seen = recordGatewayRequests(gateway.app.server.server);
    const created = await gateway.createAccount({ balance: "50" });
    key = created.raw;
    accountId = created.account.id;
    proxy = await startProxyTrap();
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
    await proxy?.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
    seen.length = 0;
    proxy.attempts.length = 0;
  });

  const context = () =>
    [
      `gateway saw: ${JSON.stringify(seen.map((s) => `${s.method} ${s.url} -> ${s.status}`))}`,
      `upstream saw: ${JSON.stringify(mock.requests.map((r) => `${r.method} ${r.url}`))}`,
      `gateway log: ${JSON.stringify(gateway.logs.slice(-5))}`,
    ].join("\n");

  /** The request log lines of model requests, and the ledger rows, of `model`. */
  const served = async (model: string) => ({
    lines: gateway.logs.filter((l) => l.model === model && typeof l.status === "number"),
    rows: await gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).where("model", "=", model).execute(),
  });

  it(
    "Claude Code: answers through the fallback deployment (Anthropic-native after the bridge's deployment failed)",
    async () => {
      const binary = claudeBinary();
      expect(binary, "the @anthropic-ai/claude-code native binary is missing: run npm install").toBeTruthy();
      mock.handler = (_req, res) => anthropicStream(res, ["PONG-", "5151 ", "via fallback"]);
      const home = tempDir("claude-home-");
      mkdirSync(join(home, ".claude"), { recursive: true });
      const model = "routed-claude";
      const env: Record<string, string> = {
        ...isolatedEnv(home, proxy),
        ANTHROPIC_BASE_URL: gateway.url,
        ANTHROPIC_API_KEY: key,
        CLAUDE_CONFIG_DIR: join(home, ".claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        ANTHROPIC_MODEL: model,
        ANTHROPIC_SMALL_FAST_MODEL: model,
        ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
        ANTHROPIC_DEFAULT_SONNET_MODEL: model,
        ANTHROPIC_DEFAULT_OPUS_MODEL: model,
        CLAUDE_CODE_MAX_OUTPUT_TOKENS: "4096",
      };
      const run = await runAgent(binary!, ["-p", "Say the magic word.", "--output-format", "text", "--no-session-persistence", "--tools", ""], {
        env,
        cwd: tempDir("claude-cwd-"),
        timeoutMs: RUN_TIMEOUT_MS,
      });
      expect(run.code, describeRun(run, context())).toBe(0);
      expect(run.stdout.trim(), describeRun(run, context())).toBe("PONG-5151 via fallback");
      expect(mock.requests.length, context()).toBeGreaterThanOrEqual(1);
      for (const request of mock.requests) expect(request.body).toMatchObject({ model: "claude-upstream" });
      const { lines, rows } = await served(model);
      expect(lines.length, context()).toBeGreaterThanOrEqual(1);
      for (const line of lines) expect(line, context()).toMatchObject({ status: 200, deployment: "fallback", provider: "mockanthropic", attempts: 2 });
      expect(rows.length).toBeGreaterThanOrEqual(1);
      for (const row of rows) expect(row).toMatchObject({ deployment: "fallback", provider: "mockanthropic" });
      // The warnings are the serving (native) plan's: none, though the bridge planned first would drop fields.
      const posts = seen.filter((s) => s.method === "POST" && s.url.startsWith("/v1/messages"));
      for (const post of posts) expect(post.warnings, context()).toBeUndefined();
      expect(proxy.attempts).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "Codex: answers through the fallback deployment (Responses→Chat bridge)",
    async () => {
      const launcher = codexLauncher();
      expect(launcher, "@openai/codex is missing: run npm install").toBeTruthy();
      mock.handler = (req, res) => chatStream(req, res, ["PONG-", "6262 ", "via fallback"]);
      const home = tempDir("codex-home-");
      const codexHome = join(home, ".codex");
      mkdirSync(codexHome, { recursive: true });
      const model = "routed-gpt";
      writeFileSync(
        join(codexHome, "config.toml"),
        [
          `model = "${model}"`,
          `model_provider = "gateway"`,
          `approval_policy = "never"`,
          `sandbox_mode = "read-only"`,
          ``,
          `[model_providers.gateway]`,
          `name = "Model Gateway"`,
          `base_url = "${gateway.url}/v1"`,
          `wire_api = "responses"`,
          `env_key = "MODEL_GATEWAY_KEY"`,
          ``,
          `[features]`,
          `plugins = false`,
          ``,
          `[analytics]`,
          `enabled = false`,
          ``,
        ].join("\n"),
      );
      const lastMessageFile = join(home, "last-message.txt");
      const env = { ...isolatedEnv(home, proxy), CODEX_HOME: codexHome, MODEL_GATEWAY_KEY: key };
      const args = [launcher!, "exec", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--color", "never", "-o", lastMessageFile, "Say the magic word."];
      const run = await runAgent(process.execPath, args, { env, cwd: tempDir("codex-cwd-"), timeoutMs: RUN_TIMEOUT_MS });
      expect(run.code, describeRun(run, context())).toBe(0);
      expect(readFileSync(lastMessageFile, "utf8").trim(), describeRun(run, context())).toBe("PONG-6262 via fallback");
      const upstream = mock.requests.filter((r) => r.url === "/v1/chat/completions");
      expect(upstream.length, context()).toBe(1);
      expect(upstream[0]!.body).toMatchObject({ model: "upstream-gpt", stream: true });
      const { lines, rows } = await served(model);
      expect(lines, context()).toHaveLength(1);
      expect(lines[0]).toMatchObject({ status: 200, deployment: "fallback", provider: "mockai", attempts: 2 });
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ deployment: "fallback", provider: "mockai" });
      expect(proxy.attempts).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
