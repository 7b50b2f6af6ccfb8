// Gemini CLI (`gemini -p`, headless, @google/gemini-cli pinned in package.json) through the gateway's
// Gemini API (/v1beta) against mock upstreams on 127.0.0.1: a prompt on an OpenAI-compatible upstream
// and on an Anthropic upstream, and a tool round trip (the CLI's read_file) on the OpenAI-compatible
// one. The key is GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL points at the gateway, telemetry, usage
// statistics and update checks are off, and every other request goes to the proxy trap: none may
// leave the machine. The bundle is plain JavaScript, run with this Node.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { anthropicStream, chatStream, type MockUpstream, type RecordedRequest } from "../support/mock-upstream.js";
import type { TestGateway } from "../support/gateway.js";
import { describeRun, geminiCliLauncher, isolatedEnv, runAgent, tempDir, useAgentRig, type AgentRun, type ProxyTrap, type SeenRequest } from "./support.js";

const RUN_TIMEOUT_MS = 90_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;
const ANSWER = "PONG-4242 from the mock";

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

describe("Gemini CLI through the gateway", () => {
  const launcher = geminiCliLauncher();
  let mock: MockUpstream;
  let gateway: TestGateway;
  let proxy: ProxyTrap;
  let seen: SeenRequest[];
  let key: string;
  useAgentRig((rig) => ({ mock, gateway, proxy, seen, key } = rig));

  /** One headless run with a private HOME (its settings: API-key auth, no telemetry, no update checks). */
  async function gemini(model: string, prompt: string, cwd: string = tempDir("gemini-cwd-")): Promise<{ run: AgentRun; context: string }> {
    expect(launcher, "@google/gemini-cli is missing: run npm install").toBeTruthy();
    const home = tempDir("gemini-home-");
    mkdirSync(join(home, ".gemini"), { recursive: true });
    writeFileSync(
      join(home, ".gemini", "settings.json"),
      JSON.stringify({
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        security: { auth: { selectedType: "gemini-api-key" } },
      }),
    );
    const env = {
      ...isolatedEnv(home, proxy),
      GEMINI_API_KEY: key,
      GOOGLE_GEMINI_BASE_URL: gateway.url,
      GEMINI_TELEMETRY_ENABLED: "false",
      // No relaunch of itself with a larger heap: one process, in the test's process group.
      GEMINI_CLI_NO_RELAUNCH: "true",
      // Headless runs refuse an untrusted folder; the temporary cwd is the test's own.
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    };
    const run = await runAgent(process.execPath, [launcher!, "-p", prompt, "-m", model, "--output-format", "json"], { env, cwd, timeoutMs: RUN_TIMEOUT_MS });
    const context = [
      `gateway saw: ${JSON.stringify(seen.map((s) => `${s.method} ${s.url.split("?")[0]} -> ${s.status}`))}`,
      `upstream saw: ${JSON.stringify(mock.requests.map((r) => `${r.method} ${r.url}`))}`,
      `proxy trap: ${JSON.stringify(proxy.attempts)}`,
    ].join("\n");
    return { run, context };
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
