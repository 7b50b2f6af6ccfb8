// Codex CLI (`codex exec`, headless) through the gateway's /v1/responses against a chat-only mock
// upstream on 127.0.0.1, so every turn goes through the Responses→Chat bridge: Codex's namespace
// and web_search tools, developer items, store: false and the full-history tool round trip.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatStream, json, type RecordedRequest, type MockUpstream } from "../support/mock-upstream.js";
import { strictAnthropic } from "../support/strict-anthropic.js";
import type { TestGateway } from "../support/gateway.js";
import { codexLauncher, describeRun, isolatedEnv, runAgent, tempDir, useAgentRig, type AgentRun, type ProxyTrap, type SeenRequest } from "./support.js";

const RUN_TIMEOUT_MS = 90_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;
const ANSWER = "PONG-7319 from the mock";

interface ChatMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
}

interface ChatTool {
  type: string;
  function?: { name: string; parameters?: unknown };
}

interface CodexEvent {
  type: string;
  item?: { type: string; command?: string; aggregated_output?: string; exit_code?: number | null; status?: string; text?: string };
}

describe("Codex CLI through the gateway (Responses→Chat bridge)", () => {
  const launcher = codexLauncher();
  let mock: MockUpstream;
  let gateway: TestGateway;
  let proxy: ProxyTrap;
  let seen: SeenRequest[];
  let key: string;
  useAgentRig((rig) => ({ mock, gateway, proxy, seen, key } = rig));

  /**
   * One `codex exec` with a private CODEX_HOME whose config.toml names the gateway as the model
   * provider. --strict-config makes Codex reject any key it does not know, so a renamed setting
   * (features.plugins, analytics.enabled) fails loudly instead of silently re-enabling traffic.
   * approval_policy never + the read-only sandbox let the shell tool run headless without writes.
   */
  async function codex(
    prompt: string,
    options: { json?: boolean; cwd?: string; model?: string; config?: string[] } = {},
  ): Promise<{ run: AgentRun; context: string; lastMessage: string }> {
    expect(launcher, "@openai/codex is missing: run npm install").toBeTruthy();
    const home = tempDir("codex-home-");
    const codexHome = join(home, ".codex");
    mkdirSync(codexHome, { recursive: true });
    writeFileSync(
      join(codexHome, "config.toml"),
      [
        `model = "${options.model ?? "gpt-mock"}"`,
        `model_provider = "gateway"`,
        `approval_policy = "never"`,
        `sandbox_mode = "read-only"`,
        ...(options.config ?? []),
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
    const args = [
      launcher!,
      "exec",
      "--strict-config",
      "--skip-git-repo-check",
      "--ephemeral",
      "--color",
      "never",
      "-o",
      lastMessageFile,
      ...(options.json ? ["--json"] : []),
      prompt,
    ];
    const run = await runAgent(process.execPath, args, { env, cwd: options.cwd ?? tempDir("codex-cwd-"), timeoutMs: RUN_TIMEOUT_MS });
    const context = [
      `gateway saw: ${JSON.stringify(seen.map((s) => `${s.method} ${s.url} -> ${s.status} warnings=${s.warnings ?? "-"}`))}`,
      `upstream saw: ${JSON.stringify(mock.requests.map((r) => `${r.method} ${r.url}`))}`,
      `proxy trap: ${JSON.stringify(proxy.attempts)}`,
      `gateway log: ${JSON.stringify(gateway.logs.slice(-5))}`,
    ].join("\n");
    let lastMessage = "";
    try {
      lastMessage = readFileSync(lastMessageFile, "utf8");
    } catch {
      // Codex writes it only when a turn completed; the assertions say so with the run's output.
    }
    return { run, context, lastMessage };
  }

  function chatRequests(): RecordedRequest[] {
    return mock.requests.filter((r) => r.method === "POST" && r.url === "/v1/chat/completions");
  }

  function expectOnlyFlatFunctionTools(request: RecordedRequest): ChatTool[] {
    const tools = request.body.tools as ChatTool[] | undefined;
    expect(tools?.length, "Codex's tools did not reach the upstream").toBeGreaterThan(0);
    for (const tool of tools!) {
      expect(tool.type, JSON.stringify(tool).slice(0, 300)).toBe("function");
      expect(tool.function?.name, JSON.stringify(tool).slice(0, 300)).toMatch(/^[a-zA-Z0-9_-]+$/);
      expect(tool, "a Responses-shaped tool object reached the chat upstream").not.toHaveProperty("tools");
    }
    return tools!;
  }

  it(
    "prints the mock's answer; namespace tools flattened, web_search dropped with a warning",
    async () => {
      mock.handler = (req, res) => chatStream(req, res, ["PONG-", "7319 from", " the mock"]);
      const { run, context, lastMessage } = await codex("Say the magic word.");
      expect(run.code, describeRun(run, context)).toBe(0);
      expect(run.stdout.trim(), describeRun(run, context)).toBe(ANSWER);
      expect(lastMessage.trim(), describeRun(run, context)).toBe(ANSWER);

      const posts = seen.filter((s) => s.method === "POST" && s.url.startsWith("/v1/responses"));
      expect(posts.length, context).toBe(1);
      expect(posts[0]!.url).toBe("/v1/responses");
      expect(posts[0]!.status, context).toBe(200);
      expect(posts[0]!.headers.authorization).toBe(`Bearer ${key}`);
      // The bridge says what it dropped, and Codex carries on regardless of the header.
      expect(posts[0]!.warnings, context).toMatch(/web_search/);

      const upstream = chatRequests();
      expect(upstream.length, context).toBe(1);
      const body = upstream[0]!.body;
      expect(body).toMatchObject({ model: "upstream-gpt", stream: true, stream_options: { include_usage: true } });
      const names = expectOnlyFlatFunctionTools(upstream[0]!).map((t) => t.function!.name);
      expect(names).toContain("exec_command");
      expect(
        names.some((n) => n.includes("__")),
        `no namespaced tool was flattened: ${names.join(", ")}`,
      ).toBe(true);
      expect(names).not.toContain("web_search");
      // Codex sends developer items and no instructions: they become system turns before the prompt.
      const messages = body.messages as ChatMessage[];
      expect(messages[0]!.role).toBe("system");
      expect(JSON.stringify(messages.at(-1))).toContain("Say the magic word.");
      // Responses-only fields stay at the gateway.
      for (const field of ["input", "include", "store", "client_metadata", "instructions"]) expect(body[field], field).toBeUndefined();
      expect(proxy.attempts, "Codex tried to reach something other than the gateway").toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "completes a shell tool round trip: exec_command runs, its output goes back in the full history",
    async () => {
      const cwd = tempDir("codex-cwd-");
      const args = JSON.stringify({ cmd: "echo hello" });
      mock.handler = (req, res) => {
        const messages = req.body.messages as ChatMessage[];
        if (!messages.some((m) => m.role === "tool")) {
          // Text first, then the call with its arguments split across chunks: two output items.
          return chatStream(
            req,
            res,
            [
              "Running it.",
              { tool_calls: [{ index: 0, id: "call_exec_1", type: "function", function: { name: "exec_command", arguments: "" } }] },
              { tool_calls: [{ index: 0, function: { arguments: args.slice(0, 5) } }] },
              { tool_calls: [{ index: 0, function: { arguments: args.slice(5, 14) } }] },
              { tool_calls: [{ index: 0, function: { arguments: args.slice(14) } }] },
            ],
            { finish: "tool_calls" },
          );
        }
        return chatStream(req, res, ["The command ", "printed hello."]);
      };
      const { run, context, lastMessage } = await codex("Run echo hello and tell me what it printed.", { json: true, cwd });
      expect(run.code, describeRun(run, context)).toBe(0);
      expect(lastMessage.trim(), describeRun(run, context)).toBe("The command printed hello.");

      const events = run.stdout
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as CodexEvent);
      const command = events.find((e) => e.type === "item.completed" && e.item?.type === "command_execution");
      expect(command?.item, describeRun(run, context)).toMatchObject({ exit_code: 0, status: "completed", aggregated_output: "hello\n" });
      expect(events.filter((e) => e.type === "item.completed" && e.item?.type === "agent_message").at(-1)?.item?.text).toBe("The command printed hello.");
      expect(events.at(-1)?.type, describeRun(run, context)).toBe("turn.completed");

      const upstream = chatRequests();
      expect(upstream.length, context).toBe(2);
      for (const request of upstream) expectOnlyFlatFunctionTools(request);
      // No previous_response_id from Codex (store: false): the second request carries the whole
      // history, the call and its output included, so the bridge must rebuild it from input items.
      const history = upstream[1]!.body.messages as ChatMessage[];
      const call = history.find((m) => m.role === "assistant" && m.tool_calls?.length);
      expect(call?.tool_calls?.[0], JSON.stringify(history).slice(-3_000)).toMatchObject({ id: "call_exec_1", type: "function", function: { name: "exec_command" } });
      expect(JSON.parse(call!.tool_calls![0]!.function.arguments)).toEqual({ cmd: "echo hello" });
      const output = history.find((m) => m.role === "tool" && m.tool_call_id === "call_exec_1");
      expect(output, JSON.stringify(history).slice(-3_000)).toBeDefined();
      expect(String(output!.content)).toContain("hello");
      expect(history.indexOf(output!)).toBeGreaterThan(history.indexOf(call!));
      expect(
        seen.filter((s) => s.url.startsWith("/v1/responses")).map((s) => s.status),
        context,
      ).toEqual([200, 200]);
      expect(proxy.attempts).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "routes a call to a flattened namespace tool back to Codex's namespaced tool, and flattens it again in history",
    async () => {
      // multi_agent_v1.wait_agent with an id that cannot exist: harmless, and only Codex's real
      // wait_agent handler answers "invalid agent id" (an unrestored name would be an unknown tool).
      mock.handler = (req, res) => {
        const messages = req.body.messages as ChatMessage[];
        if (!messages.some((m) => m.role === "tool")) {
          return chatStream(
            req,
            res,
            [
              {
                tool_calls: [
                  { index: 0, id: "call_ns_1", type: "function", function: { name: "multi_agent_v1__wait_agent", arguments: '{"targets":["no-such-agent"],"timeout_ms":10}' } },
                ],
              },
            ],
            { finish: "tool_calls" },
          );
        }
        return chatStream(req, res, ["No such agent."]);
      };
      const { run, context, lastMessage } = await codex("Wait for the agent.");
      expect(run.code, describeRun(run, context)).toBe(0);
      expect(lastMessage.trim(), describeRun(run, context)).toBe("No such agent.");
      const upstream = chatRequests();
      expect(upstream.length, context).toBe(2);
      const history = upstream[1]!.body.messages as ChatMessage[];
      const call = history.find((m) => m.role === "assistant" && m.tool_calls?.length);
      expect(call?.tool_calls?.[0]?.function.name, JSON.stringify(history).slice(-2_000)).toBe("multi_agent_v1__wait_agent");
      const output = history.find((m) => m.role === "tool" && m.tool_call_id === "call_ns_1");
      expect(String(output?.content), JSON.stringify(history).slice(-2_000)).toMatch(/invalid agent id/i);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "reconnects after a stream cut mid-way (response.failed), then completes",
    async () => {
      let calls = 0;
      mock.handler = (req, res) => {
        calls += 1;
        if (calls === 1) return chatStream(req, res, ["PONG-", "partial", "never sent"], { stopAfter: 1, delayMs: 10 });
        return chatStream(req, res, [ANSWER]);
      };
      const { run, context, lastMessage } = await codex("Say the magic word.", { json: true });
      expect(run.code, describeRun(run, context)).toBe(0);
      expect(lastMessage.trim(), describeRun(run, context)).toBe(ANSWER);
      const events = run.stdout
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as CodexEvent & { message?: string });
      // Codex names the failure it saw: the gateway's own message, not a parse error or a hang.
      expect(
        events.some((e) => e.type === "error" && /Reconnecting/.test(e.message ?? "") && /upstream stream failed/i.test(e.message ?? "")),
        describeRun(run, context),
      ).toBe(true);
      expect(chatRequests().length, context).toBe(2);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "runs a 5-turn tool session on an Anthropic-native upstream: thinking signed and sent back, cache breakpoints every turn, cache reads billed",
    async () => {
      const cwd = tempDir("codex-cwd-");
      const strict = strictAnthropic((turn) =>
        turn < 5
          ? { thinking: `Step ${turn}: run the next echo.`, redacted: turn === 2, tool: { id: `toolu_step_${turn}`, name: "exec_command", input: { cmd: `echo step-${turn}` } } }
          : { thinking: "All four ran; report.", text: "All five steps done." },
      );
      mock.handler = (req, res) => (req.url === "/v1/messages" ? strict.handler(req, res) : json(res, 500, { error: { message: "only /v1/messages here" } }));
      const { run, context, lastMessage } = await codex("Run four echo commands, one at a time, then report.", {
        json: true,
        cwd,
        model: "claude-mock",
        config: [`model_reasoning_effort = "medium"`, `model_reasoning_summary = "auto"`],
      });
      const detail = `${describeRun(run, context)}
refusals: ${JSON.stringify(strict.refusals)}
turns: ${JSON.stringify(strict.turns)}`;
      expect(strict.refusals, detail).toEqual([]);
      expect(run.code, detail).toBe(0);
      expect(lastMessage.trim(), detail).toBe("All five steps done.");

      // Every turn: thinking on (the signed blocks came back through encrypted_content), 1 to 4 breakpoints.
      expect(strict.turns.length, detail).toBe(5);
      for (const turn of strict.turns) {
        expect(turn.thinking, detail).toBe(true);
        expect(turn.breakpoints, detail).toBeGreaterThanOrEqual(1);
        expect(turn.breakpoints, detail).toBeLessThanOrEqual(4);
      }
      // From the second turn on, the previous turn's prefix is read back from the cache.
      for (const turn of strict.turns.slice(1)) expect(turn.cacheRead, detail).toBeGreaterThan(0);
      const upstream = mock.requests.filter((r) => r.url === "/v1/messages");
      // medium is 8,192; claude-mock allows 8,192 output tokens, and the answer keeps its default 1,000.
      expect(upstream[4]!.body.thinking, detail).toEqual({ type: "enabled", budget_tokens: 8192 - 1000 });
      // The redacted block of turn 2 went back verbatim in turn 3.
      expect(JSON.stringify(upstream[2]!.body.messages)).toContain("redacted:");

      const events = run.stdout
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as CodexEvent & { usage?: { cached_input_tokens?: number } });
      const commands = events.filter((e) => e.type === "item.completed" && e.item?.type === "command_execution");
      expect(
        commands.map((e) => e.item?.aggregated_output),
        detail,
      ).toEqual(["step-1\n", "step-2\n", "step-3\n", "step-4\n"]);
      expect(
        events.some((e) => e.type === "item.completed" && e.item?.type === "reasoning"),
        detail,
      ).toBe(true);
      // Codex's own usage line counts the cache reads the gateway reported.
      const usage = events.find((e) => e.type === "turn.completed")?.usage;
      expect(usage?.cached_input_tokens, detail).toBe(strict.turns.reduce((sum, t) => sum + t.cacheRead, 0));

      const ledger = await gateway.app.ctx.store.db
        .selectFrom("ledger")
        .select(["cached_tokens", "input_tokens", "reasoning_tokens", "model"])
        .where("route", "=", "responses")
        .where("model", "=", "claude-mock")
        .orderBy("id")
        .execute();
      expect(
        ledger.slice(-5).map((row) => Number(row.cached_tokens)),
        detail,
      ).toEqual(strict.turns.map((t) => t.cacheRead));
      for (const row of ledger.slice(-5)) expect(Number(row.reasoning_tokens)).toBeGreaterThan(0);
      expect(proxy.attempts).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "fails fast on an unknown model with the gateway's message",
    async () => {
      mock.handler = (_req, res) => json(res, 500, { error: { message: "the upstream must not be called" } });
      const { run, context } = await codex("Say the magic word.", { json: true, model: "no-such-model" });
      expect(run.timedOut, describeRun(run, context)).toBe(false);
      expect(run.code, describeRun(run, context)).not.toBe(0);
      expect(run.ms, describeRun(run, context)).toBeLessThan(30_000);
      const events = run.stdout
        .trim()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as CodexEvent & { error?: { message?: string } });
      expect(events.find((e) => e.type === "turn.failed")?.error?.message, describeRun(run, context)).toMatch(/no-such-model/);
      expect(
        seen.filter((s) => s.url.startsWith("/v1/responses")).map((s) => s.status),
        context,
      ).toEqual([404]);
      expect(mock.requests).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
