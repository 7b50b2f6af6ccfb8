// Gemini CLI (`gemini -p`, headless, @google/gemini-cli pinned in package.json) through the gateway's
// Gemini API (/v1beta) against mock upstreams on 127.0.0.1: a prompt and a tool round trip (the CLI's
// read_file) on an OpenAI-compatible upstream, on an Anthropic upstream and on a Gemini-native upstream
// (a pass-through: the thought signature of the model's call comes back unchanged, usage billed). The key is GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL points at the gateway, telemetry, usage
// statistics and update checks are off, and every other request goes to the proxy trap: none may
// leave the machine. The bundle is plain JavaScript, run with this Node.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { geminiResponse, geminiStream, startGeminiMock, type GeminiMock, type GeminiPart } from "../support/gemini-upstream.js";
import { anthropicStream, chatStream, type MockUpstream, type RecordedRequest } from "../support/mock-upstream.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import {
  describeRun,
  geminiCliEnv,
  geminiCliLauncher,
  recordGatewayRequests,
  runAgent,
  startProxyTrap,
  tempDir,
  useAgentRig,
  type AgentRun,
  type ProxyTrap,
  type SeenRequest,
} from "./support.js";

const RUN_TIMEOUT_MS = 90_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;
const ANSWER = "PONG-4242 from the mock";

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

const launcher = geminiCliLauncher();

/** One headless run with a private HOME (its settings: API-key auth, no telemetry, no update checks). */
async function runGeminiCli(rig: { gatewayUrl: string; key: string; proxy: ProxyTrap }, model: string, prompt: string, cwd: string): Promise<AgentRun> {
  expect(launcher, "@google/gemini-cli is missing: run npm install").toBeTruthy();
  const env = geminiCliEnv(rig.gatewayUrl, rig.key, rig.proxy);
  return runAgent(process.execPath, [launcher!, "-p", prompt, "-m", model, "--output-format", "json"], { env, cwd, timeoutMs: RUN_TIMEOUT_MS });
}

/** The CLI's --output-format json result: its `response` is the model's final text. */
function response(run: AgentRun, context: string): string {
  expect(run.code, describeRun(run, context)).toBe(0);
  try {
    return (JSON.parse(run.stdout.slice(run.stdout.indexOf("{"))) as { response: string }).response;
  } catch {
    throw new Error(`stdout is not Gemini CLI's JSON result\n${describeRun(run, context)}`);
  }
}

describe("Gemini CLI through the gateway", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let proxy: ProxyTrap;
  let seen: SeenRequest[];
  let key: string;
  useAgentRig((rig) => ({ mock, gateway, proxy, seen, key } = rig));

  async function gemini(model: string, prompt: string, cwd: string = tempDir("gemini-cwd-")): Promise<{ run: AgentRun; context: string }> {
    const run = await runGeminiCli({ gatewayUrl: gateway.url, key, proxy }, model, prompt, cwd);
    const context = [
      `gateway saw: ${JSON.stringify(seen.map((s) => `${s.method} ${s.url.split("?")[0]} -> ${s.status}`))}`,
      `upstream saw: ${JSON.stringify(mock.requests.map((r) => `${r.method} ${r.url}`))}`,
      `proxy trap: ${JSON.stringify(proxy.attempts)}`,
    ].join("\n");
    return { run, context };
  }

  const geminiPosts = (model: string) => seen.filter((s) => s.method === "POST" && s.url.startsWith(`/v1beta/models/${model}:`));
  const chatRequests = (): RecordedRequest[] => mock.requests.filter((r) => r.method === "POST" && r.url === "/v1/chat/completions");

  it(
    "completes a prompt on an OpenAI-compatible upstream, with the key in x-goog-api-key and nothing leaving the machine",
    async () => {
      mock.handler = (req, res) => chatStream(req, res, ["PONG-", "4242 from", " the mock"], { usage: { prompt_tokens: 20, completion_tokens: 6, total_tokens: 26 } });
      const { run, context } = await gemini("gpt-mock", "Say the magic word.");
      expect(response(run, context)).toContain(ANSWER);
      const posts = geminiPosts("gpt-mock");
      expect(posts.length, context).toBeGreaterThan(0);
      expect(
        posts.every((s) => s.status === 200 && s.url.includes(":streamGenerateContent") && s.headers["x-goog-api-key"] === key),
        context,
      ).toBe(true);
      expect(chatRequests()[0]!.body).toMatchObject({ model: "upstream-gpt", stream: true });
      expect(proxy.attempts, context).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "completes a prompt on an Anthropic upstream",
    async () => {
      mock.handler = (_req, res) => anthropicStream(res, ["PONG-", "4242 ", "from the mock"], { usage: { input: 30, output: 7 } });
      const { run, context } = await gemini("claude-mock", "Say the magic word.");
      expect(response(run, context)).toContain(ANSWER);
      expect(mock.requests.filter((r) => r.url === "/v1/messages").length, context).toBeGreaterThan(0);
      expect(mock.requests[0]!.body).toMatchObject({ model: "claude-upstream", stream: true });
      expect(proxy.attempts, context).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a tool round trip on an Anthropic upstream: the tool_use runs in the CLI and its result comes back as a tool_result",
    async () => {
      const cwd = tempDir("gemini-cwd-");
      writeFileSync(join(cwd, "note.txt"), "The secret is KITE-78.\n");
      mock.handler = (req, res) => {
        const messages = (req.body.messages ?? []) as Array<{ role: string; content: unknown }>;
        const answered = messages.some((m) => Array.isArray(m.content) && (m.content as Array<{ type?: string }>).some((block) => block.type === "tool_result"));
        if (!answered) return anthropicStream(res, [], { tool: { id: "toolu_read_1", name: "read_file", fragments: ['{"file_path":', '"note.txt"}'] } });
        return anthropicStream(res, ["The note says KITE-78."]);
      };
      const { run, context } = await gemini("claude-mock", "What does note.txt say?", cwd);
      expect(response(run, context)).toContain("KITE-78");
      const requests = mock.requests.filter((r) => r.method === "POST" && r.url === "/v1/messages");
      expect(requests.length, context).toBeGreaterThanOrEqual(2);
      const history = requests.at(-1)!.body.messages as Array<{
        role: string;
        content: Array<{ type: string; id?: string; name?: string; tool_use_id?: string; content?: unknown }>;
      }>;
      const call = history.flatMap((m) => (m.role === "assistant" && Array.isArray(m.content) ? m.content : [])).find((block) => block.type === "tool_use");
      expect(call, context).toMatchObject({ id: "toolu_read_1", name: "read_file" });
      const result = history.flatMap((m) => (m.role === "user" && Array.isArray(m.content) ? m.content : [])).find((block) => block.type === "tool_result");
      expect(result?.tool_use_id).toBe("toolu_read_1");
      expect(JSON.stringify(result?.content)).toContain("KITE-78");
      expect(proxy.attempts, context).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "a tool round trip: the model's read_file call runs in the CLI and its result comes back as a tool message",
    async () => {
      const cwd = tempDir("gemini-cwd-");
      writeFileSync(join(cwd, "note.txt"), "The secret is KITE-77.\n");
      mock.handler = (req, res) => {
        const messages = (req.body.messages ?? []) as ChatMessage[];
        const toolResult = messages.find((m) => m.role === "tool");
        if (!toolResult) {
          return chatStream(
            req,
            res,
            [{ tool_calls: [{ index: 0, id: "call_read_1", type: "function", function: { name: "read_file", arguments: JSON.stringify({ file_path: "note.txt" }) } }] }],
            {
              finish: "tool_calls",
            },
          );
        }
        return chatStream(req, res, ["The note says KITE-77."]);
      };
      const { run, context } = await gemini("gpt-mock", "What does note.txt say?", cwd);
      expect(response(run, context)).toContain("KITE-77");
      const requests = chatRequests();
      expect(requests.length, context).toBeGreaterThanOrEqual(2);
      const history = requests.at(-1)!.body.messages as ChatMessage[];
      const call = history.find((m) => m.role === "assistant" && m.tool_calls?.length);
      expect(call?.tool_calls?.[0]).toMatchObject({ id: "call_read_1", function: { name: "read_file" } });
      const result = history.find((m) => m.role === "tool");
      expect(result?.tool_call_id).toBe("call_read_1");
      expect(JSON.stringify(result?.content)).toContain("KITE-77");
      expect(proxy.attempts, context).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});

describe("Gemini CLI through the gateway on a Gemini-native upstream", () => {
  const GEMINI_KEYS = ["AIzaSyMOCK-gemini-cli-native-0001"];
  const SIGNATURE = "c2lnbmVkLXRob3VnaHQtZm9yLXJlYWRfZmlsZQ==";
  let upstream: GeminiMock;
  let gateway: TestGateway;
  let proxy: ProxyTrap;
  let seen: SeenRequest[];
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    upstream = await startGeminiMock(GEMINI_KEYS);
    gateway = await startGateway(`
providers:
  google-native:
    type: gemini
    base_url: "${upstream.url}"
    keys: ${JSON.stringify(GEMINI_KEYS)}
models:
  - id: gemini-native
    kind: chat
    provider: google-native
    upstream_model: gemini-2.5-flash
    context_window: 1048576
    max_output_tokens: 65536
    default_output_tokens: 1000
    pricing: { input_per_mtok: "0.30", cached_input_per_mtok: "0.075", output_per_mtok: "2.50" }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
`);
    seen = recordGatewayRequests(gateway.app.server.server);
    const created = await gateway.createAccount({ balance: "50" });
    key = created.raw;
    accountId = created.account.id;
    proxy = await startProxyTrap();
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await proxy?.close();
  });

  it(
    "a tool round trip passes through: the call's thought signature comes back unchanged, cached and thought tokens billed",
    async () => {
      const cwd = tempDir("gemini-cwd-");
      writeFileSync(join(cwd, "note.txt"), "The secret is KITE-79.\n");
      const usage = { promptTokenCount: 400, cachedContentTokenCount: 100, candidatesTokenCount: 20, thoughtsTokenCount: 30, totalTokenCount: 450 };
      upstream.answer = (req, res) => {
        if (req.operation === "countTokens") {
          res.writeHead(200, { "content-type": "application/json" });
          res.end(JSON.stringify({ totalTokens: 400 }));
          return;
        }
        const contents = (req.body.contents ?? []) as Array<{ parts: Array<Record<string, unknown>> }>;
        const answered = contents.some((c) => c.parts.some((part) => part.functionResponse !== undefined));
        // The signed call, as Gemini 2.5 answers a function call with thinking on.
        const call: GeminiPart = { functionCall: { name: "read_file", args: { file_path: "note.txt" } }, thoughtSignature: SIGNATURE };
        if (req.stream) return geminiStream(res, [answered ? [{ text: "The note says KITE-79." }] : [call]], usage);
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(geminiResponse(answered ? [{ text: "The note says KITE-79." }] : [call], usage)));
      };
      const before = await usageRows(gateway, accountId);
      const run = await runGeminiCli({ gatewayUrl: gateway.url, key, proxy }, "gemini-native", "What does note.txt say?", cwd);
      const context = [
        `gateway saw: ${JSON.stringify(seen.map((s) => `${s.method} ${s.url.split("?")[0]} -> ${s.status}`))}`,
        `upstream saw: ${JSON.stringify(upstream.requests.map((r) => `${r.operation} ${r.model}`))}`,
        `proxy trap: ${JSON.stringify(proxy.attempts)}`,
      ].join("\n");
      expect(response(run, context)).toContain("KITE-79");
      const generations = upstream.requests.filter((r) => r.operation !== "countTokens");
      expect(generations.length, context).toBeGreaterThanOrEqual(2);
      expect(
        generations.every((r) => r.model === "gemini-2.5-flash" && r.key === GEMINI_KEYS[0]),
        context,
      ).toBe(true);
      // The model's call, as the CLI sends it back in the history: the signature byte for byte.
      const history = generations.at(-1)!.body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>;
      const signed = history.flatMap((c) => (c.role === "model" ? c.parts : [])).find((part) => part.functionCall !== undefined);
      expect(signed, context).toMatchObject({ functionCall: { name: "read_file" }, thoughtSignature: SIGNATURE });
      const result = history.flatMap((c) => c.parts).find((part) => part.functionResponse !== undefined);
      expect(JSON.stringify(result), context).toContain("KITE-79");
      // Every generation billed once from the upstream's usageMetadata: cached and thought tokens included.
      const rows = (await usageRows(gateway, accountId)).slice(before.length);
      expect(rows.length, context).toBe(generations.length);
      for (const row of rows) {
        expect([Number(row.input_tokens), Number(row.cached_tokens), Number(row.output_tokens), Number(row.reasoning_tokens)]).toEqual([400, 100, 50, 30]);
      }
      expect(proxy.attempts, context).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});

function usageRows(gateway: TestGateway, accountId: string) {
  return gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).where("kind", "=", "usage").orderBy("id").execute();
}
