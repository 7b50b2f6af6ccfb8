// Claude Code (`claude -p`, headless) through the gateway against mock upstreams on 127.0.0.1: the
// Anthropic-native pass-through and the Messages→Chat bridge, each with a tool round trip.
// @anthropic-ai/claude-code ships a native executable, so these tests need no particular Node version;
// package.json pins 2.1.197, the last release whose engines field still accepts Node 20.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { anthropicStream, chatCompletion, chatStream, json, type RecordedRequest, type MockUpstream } from "../support/mock-upstream.js";
import type { TestGateway } from "../support/gateway.js";
import { claudeBinary, describeRun, isolatedEnv, runAgent, tempDir, useAgentRig, type AgentRun, type ProxyTrap, type SeenRequest } from "./support.js";

const RUN_TIMEOUT_MS = 90_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;
const ANSWER = "PONG-4242 from the mock";

interface ChatToolMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}

interface AnthropicBlock {
  type: string;
  tool_use_id?: string;
  content?: unknown;
}

describe("Claude Code through the gateway", () => {
  const binary = claudeBinary();
  let mock: MockUpstream;
  let gateway: TestGateway;
  let proxy: ProxyTrap;
  let seen: SeenRequest[];
  let key: string;
  // claude-cache-mock: claude-mock's prices plus its cache-write prices (1.25x and 2x input); premium tier has every model.
  useAgentRig((rig) => ({ mock, gateway, proxy, seen, key } = rig), {
    tier: "premium",
    extraModels: `  - id: claude-cache-mock
    kind: chat
    provider: mockanthropic
    upstream_model: claude-upstream
    max_output_tokens: 8192
    pricing: { input_per_mtok: "3.00", cached_input_per_mtok: "0.30", cache_write_5m_per_mtok: "3.75", cache_write_1h_per_mtok: "6.00", output_per_mtok: "15.00" }`,
  });

  /** One headless run with a private HOME and config dir; the key goes as x-api-key or Bearer. */
  async function claude(options: {
    model: string;
    prompt: string;
    auth?: "api-key" | "bearer";
    args?: string[];
    cwd?: string;
    format?: "json" | "text";
    /** Changes to the environment; undefined removes a variable. */
    env?: Record<string, string | undefined>;
  }): Promise<{ run: AgentRun; context: string; home: string }> {
    expect(binary, "the @anthropic-ai/claude-code native binary is missing: run npm install (its platform package is an optional dependency)").toBeTruthy();
    const home = tempDir("claude-home-");
    mkdirSync(join(home, ".claude"), { recursive: true });
    const env: Record<string, string> = {
      ...isolatedEnv(home, proxy),
      ANTHROPIC_BASE_URL: gateway.url,
      CLAUDE_CONFIG_DIR: join(home, ".claude"),
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      // Every model slot Claude Code may pick from names a model of the gateway config.
      ANTHROPIC_MODEL: options.model,
      ANTHROPIC_SMALL_FAST_MODEL: options.model,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: options.model,
      ANTHROPIC_DEFAULT_SONNET_MODEL: options.model,
      ANTHROPIC_DEFAULT_OPUS_MODEL: options.model,
      // Claude Code asks for 32,000 output tokens for a model it does not know; the gateway refuses
      // more than the model's max_output_tokens (gpt-mock 4096, claude-mock 8192), as Anthropic does.
      CLAUDE_CODE_MAX_OUTPUT_TOKENS: "4096",
    };
    if (options.auth === "bearer") env.ANTHROPIC_AUTH_TOKEN = key;
    else env.ANTHROPIC_API_KEY = key;
    for (const [name, value] of Object.entries(options.env ?? {})) {
      if (value === undefined) delete env[name];
      else env[name] = value;
    }
    const args = ["-p", options.prompt, "--output-format", options.format ?? "json", "--no-session-persistence", ...(options.args ?? [])];
    const run = await runAgent(binary!, args, { env, cwd: options.cwd ?? tempDir("claude-cwd-"), timeoutMs: RUN_TIMEOUT_MS });
    const context = [
      `gateway saw: ${JSON.stringify(seen.map((s) => `${s.method} ${s.url} -> ${s.status}`))}`,
      `upstream saw: ${JSON.stringify(mock.requests.map((r) => `${r.method} ${r.url}`))}`,
      `proxy trap: ${JSON.stringify(proxy.attempts)}`,
      `gateway log: ${JSON.stringify(gateway.logs.slice(-5))}`,
    ].join("\n");
    return { run, context, home };
  }

  /** Claude Code's --output-format json result line. */
  function result(run: AgentRun, context: string): { result: string; is_error: boolean; num_turns: number; subtype: string } {
    expect(run.code, describeRun(run, context)).toBe(0);
    const line = run.stdout.trim().split("\n").at(-1) ?? "";
    try {
      return JSON.parse(line) as { result: string; is_error: boolean; num_turns: number; subtype: string };
    } catch {
      throw new Error(`stdout is not Claude Code's JSON result\n${describeRun(run, context)}`);
    }
  }

  function chatRequests(): RecordedRequest[] {
    return mock.requests.filter((r) => r.method === "POST" && r.url === "/v1/chat/completions");
  }

  function messagesPosts(): SeenRequest[] {
    return seen.filter((s) => s.method === "POST" && s.url.startsWith("/v1/messages"));
  }

  describe("Anthropic-native upstream (pass-through)", () => {
    it(
      "answers with x-api-key; ?beta=true accepted; anthropic-beta values and tools: [] reach the upstream",
      async () => {
        mock.handler = (_req, res) => anthropicStream(res, ["PONG-", "4242 ", "from the mock"]);
        const { run, context } = await claude({ model: "claude-mock", prompt: "Say the magic word.", args: ["--tools", ""] });
        const out = result(run, context);
        expect(out, describeRun(run, context)).toMatchObject({ result: ANSWER, is_error: false, subtype: "success" });

        const posts = messagesPosts();
        expect(posts.length, context).toBeGreaterThanOrEqual(1);
        for (const post of posts) {
          expect(post.url, context).toBe("/v1/messages?beta=true");
          expect(post.status, context).toBe(200);
          expect(post.headers["x-api-key"], context).toBe(key);
        }
        const sentBetas = String(posts[0]!.headers["anthropic-beta"] ?? "")
          .split(",")
          .filter(Boolean);
        expect(sentBetas.length, `Claude Code sent no anthropic-beta header\n${context}`).toBeGreaterThan(0);
        const upstream = mock.requests.filter((r) => r.url.startsWith("/v1/messages"));
        expect(upstream.length, context).toBeGreaterThanOrEqual(1);
        const upstreamBetas = String(upstream[0]!.headers["anthropic-beta"] ?? "")
          .split(",")
          .filter(Boolean);
        expect(upstreamBetas).toEqual(sentBetas);
        expect(upstreamBetas).toContain("claude-code-20250219");
        // The upstream gets its own key and the model renamed; Claude Code's own fields pass untouched.
        expect(upstream[0]!.key).toBe("sk-ant-mock-key-0001");
        expect(upstream[0]!.body).toMatchObject({ model: "claude-upstream", stream: true, tools: [], max_tokens: expect.any(Number) });
        expect(upstream[0]!.body.thinking).toBeDefined();
        expect(proxy.attempts, "Claude Code tried to reach something other than the gateway").toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "charges the cache writes an Anthropic-native upstream reports at the write prices",
      async () => {
        // Every answer reports 20 uncached input tokens, 5,000 cache reads, 3,000 cache writes (2,000 for
        // 5 minutes, 1,000 for 1 hour) and 10 output tokens (the helper's message_delta: one per piece).
        const cache = { cache_read_input_tokens: 5000, cache_creation_input_tokens: 3000, cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 1000 } };
        mock.handler = (_req, res) => anthropicStream(res, ["PONG-", "4242 ", "from the mock", ".", ".", ".", ".", ".", ".", "."], { usage: { input: 20, output: 10, cache } });
        const { run, context } = await claude({ model: "claude-cache-mock", prompt: "Say the magic word.", args: ["--tools", ""] });
        expect(result(run, context).is_error, describeRun(run, context)).toBe(false);

        const rows = await gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("model", "=", "claude-cache-mock").execute();
        expect(rows.length, context).toBeGreaterThanOrEqual(1);
        for (const row of rows) {
          expect(row).toMatchObject({ input_tokens: 8020n, cached_tokens: 5000n, cache_write_5m_tokens: 2000n, cache_write_1h_tokens: 1000n, output_tokens: 10n, estimated: 0n });
          // 2,000 x 3.75 = 7,500 and 1,000 x 6.00 = 6,000 (USD per 1e6 tokens): 7,500,000 and 6,000,000 nano.
          expect(row.cache_write_5m_cost_nano).toBe(7_500_000n);
          expect(row.cache_write_1h_cost_nano).toBe(6_000_000n);
          // 20 x 3.00 + 5,000 x 0.30 + 7,500 + 6,000 + 10 x 15.00 = 60 + 1,500 + 13,500 + 150 = 15,210 -> 15,210,000 nano.
          expect(row.cost_nano).toBe(15_210_000n);
        }
        expect(proxy.attempts).toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "completes a Read tool round trip",
      async () => {
        const cwd = tempDir("claude-cwd-");
        const file = join(cwd, "note.txt");
        writeFileSync(file, "the secret number is 5150\n");
        mock.handler = (req, res) => {
          const last = (req.body.messages as Array<{ role: string; content: unknown }>).at(-1)!;
          const results = Array.isArray(last.content) ? (last.content as AnthropicBlock[]).filter((b) => b.type === "tool_result") : [];
          if (results.length === 0) {
            const input = JSON.stringify({ file_path: file });
            return anthropicStream(res, ["Reading it."], { tool: { id: "toolu_mock_read_1", name: "Read", fragments: [input.slice(0, 9), input.slice(9, 20), input.slice(20)] } });
          }
          return anthropicStream(res, ["The note says ", "5150."]);
        };
        const { run, context } = await claude({ model: "claude-mock", prompt: "What does note.txt say?", cwd, args: ["--allowedTools", "Read"] });
        const out = result(run, context);
        expect(out, describeRun(run, context)).toMatchObject({ result: "The note says 5150.", is_error: false, subtype: "success" });
        expect(out.num_turns, describeRun(run, context)).toBeGreaterThanOrEqual(2);

        const upstream = mock.requests.filter((r) => r.url.startsWith("/v1/messages"));
        expect(upstream.length, context).toBe(2);
        const blocks = (upstream[1]!.body.messages as Array<{ role: string; content: unknown }>).flatMap((m) => (Array.isArray(m.content) ? (m.content as AnthropicBlock[]) : []));
        const toolResult = blocks.find((b) => b.type === "tool_result" && b.tool_use_id === "toolu_mock_read_1");
        expect(toolResult, JSON.stringify(upstream[1]!.body.messages).slice(-3_000)).toBeDefined();
        expect(JSON.stringify(toolResult!.content)).toContain("5150");
        expect(proxy.attempts).toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );
  });

  describe("gateway protocol", () => {
    it(
      "discovers the configured Claude models from GET /v1/models at startup, and its session id lands on the log line",
      async () => {
        mock.handler = (_req, res) => anthropicStream(res, ["PONG-", "4242 ", "from the mock"]);
        // 2.1.197 runs discovery only with the flag set and nonessential traffic allowed (from 2.1.257
        // it runs either way); telemetry stays off, and the proxy trap refuses whatever else it tries.
        const { run, context, home } = await claude({
          model: "claude-mock",
          prompt: "Say the magic word.",
          args: ["--tools", ""],
          env: { CLAUDE_CODE_ENABLE_GATEWAY_MODEL_DISCOVERY: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: undefined, DISABLE_TELEMETRY: "1", DISABLE_ERROR_REPORTING: "1" },
        });
        expect(result(run, context), describeRun(run, context)).toMatchObject({ result: ANSWER, is_error: false });

        const discovery = seen.filter((s) => s.method === "GET" && s.url.startsWith("/v1/models"));
        expect(discovery.length, context).toBeGreaterThanOrEqual(1);
        for (const request of discovery) {
          expect(request.url, context).toBe("/v1/models?limit=1000");
          expect(request.status, context).toBe(200);
          expect(request.headers["anthropic-version"], context).toBe("2023-06-01");
          expect(request.headers["x-api-key"], context).toBe(key);
        }
        // What Claude Code kept for its /model picker: the gateway's Claude models of this key's tier
        // (it drops ids that do not start with claude or anthropic, so gpt-mock is not there).
        const cacheFile = join(home, ".claude", "cache", "gateway-models.json");
        expect(existsSync(cacheFile), `Claude Code wrote no ${cacheFile}\n${context}`).toBe(true);
        const cached = JSON.parse(readFileSync(cacheFile, "utf8")) as { baseUrl: string; models: Array<{ id: string; display_name?: string }> };
        expect(cached.baseUrl).toBe(gateway.url);
        const claudeModels = [...gateway.app.ctx.config.models.keys()].filter((id) => id.startsWith("claude")).sort();
        expect(claudeModels).toContain("claude-mock");
        expect(cached.models.map((m) => m.id).sort()).toEqual(claudeModels);
        expect(cached.models.every((m) => m.display_name === m.id)).toBe(true);

        const post = messagesPosts()[0];
        const sessionId = post?.headers["x-claude-code-session-id"];
        expect(typeof sessionId, context).toBe("string");
        const line = gateway.logs.find((l) => l.msg === "request" && l.path === "/v1/messages" && (l.attribution as { session_id?: string } | undefined)?.session_id === sessionId);
        expect(line, `no log line carries session ${String(sessionId)}\n${context}`).toMatchObject({ status: 200, model: "claude-mock", attribution: { app: "cli" } });
        const upstream = mock.requests.filter((r) => r.url.startsWith("/v1/messages"));
        expect(upstream[0]!.headers["x-claude-code-session-id"]).toBeUndefined();
      },
      TEST_TIMEOUT_MS,
    );
  });

  describe("OpenAI-compatible chat-only upstream (Messages→Chat bridge)", () => {
    const neverEmptyTools = (requests: RecordedRequest[]) => {
      for (const request of requests) {
        const tools = request.body?.tools as unknown[] | undefined;
        expect(tools === undefined || tools.length > 0, `an empty tools array reached the chat upstream: ${JSON.stringify(request.body).slice(0, 500)}`).toBe(true);
      }
    };

    it(
      "answers with a Bearer token and no tools: the empty tools array is not sent upstream",
      async () => {
        mock.handler = (req, res) => chatStream(req, res, ["PONG-", "4242 from", " the mock"]);
        const { run, context } = await claude({ model: "gpt-mock", prompt: "Say the magic word.", auth: "bearer", format: "text", args: ["--tools", ""] });
        expect(run.code, describeRun(run, context)).toBe(0);
        expect(run.stdout.trim(), describeRun(run, context)).toBe(ANSWER);

        const posts = messagesPosts();
        expect(posts.length, context).toBeGreaterThanOrEqual(1);
        for (const post of posts) {
          expect(post.url, context).toBe("/v1/messages?beta=true");
          expect(post.status, context).toBe(200);
          expect(post.headers.authorization, context).toBe(`Bearer ${key}`);
          expect(post.headers["x-api-key"], context).toBeUndefined();
        }
        const upstream = mock.requests.filter((r) => r.url === "/v1/chat/completions");
        expect(upstream.length, context).toBeGreaterThanOrEqual(1);
        neverEmptyTools(mock.requests);
        expect(upstream[0]!.body.tools).toBeUndefined();
        expect(upstream[0]!.body).toMatchObject({ model: "upstream-gpt", stream: true });
        // Claude Code's Anthropic-only fields do not leak into a Chat request.
        for (const field of ["thinking", "context_management", "output_config", "system"]) expect(upstream[0]!.body[field], field).toBeUndefined();
        expect(proxy.attempts).toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "answers with its default tool set, sent upstream as Chat function tools",
      async () => {
        mock.handler = (req, res) => chatStream(req, res, ["PONG-4242", " from the mock"]);
        const { run, context } = await claude({ model: "gpt-mock", prompt: "Say the magic word." });
        const out = result(run, context);
        expect(out, describeRun(run, context)).toMatchObject({ result: ANSWER, is_error: false });
        neverEmptyTools(mock.requests);
        const tools = mock.requests[0]!.body.tools as Array<{ type: string; function: { name: string } }>;
        expect(tools.length).toBeGreaterThan(0);
        expect(tools.every((t) => t.type === "function")).toBe(true);
        expect(tools.map((t) => t.function.name)).toContain("Read");
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "completes a Read tool round trip, arguments split across chunks",
      async () => {
        const cwd = tempDir("claude-cwd-");
        const file = join(cwd, "note.txt");
        writeFileSync(file, "the secret number is 8675309\n");
        const firstTurn = (req: RecordedRequest, res: ServerResponse) => {
          const args = JSON.stringify({ file_path: file });
          return chatStream(
            req,
            res,
            [
              "Let me read it.",
              { tool_calls: [{ index: 0, id: "call_read_1", type: "function", function: { name: "Read", arguments: "" } }] },
              { tool_calls: [{ index: 0, function: { arguments: args.slice(0, 7) } }] },
              { tool_calls: [{ index: 0, function: { arguments: args.slice(7, 25) } }] },
              { tool_calls: [{ index: 0, function: { arguments: args.slice(25) } }] },
            ],
            { finish: "tool_calls" },
          );
        };
        mock.handler = (req, res) => {
          const messages = req.body.messages as ChatToolMessage[];
          if (!messages.some((m) => m.role === "tool")) return firstTurn(req, res);
          return chatStream(req, res, ["The note says ", "8675309."]);
        };
        const { run, context } = await claude({ model: "gpt-mock", prompt: "What does note.txt say?", cwd, args: ["--allowedTools", "Read"] });
        const out = result(run, context);
        expect(out, describeRun(run, context)).toMatchObject({ result: "The note says 8675309.", is_error: false, subtype: "success" });

        neverEmptyTools(mock.requests);
        const upstream = mock.requests.filter((r) => r.url === "/v1/chat/completions");
        expect(upstream.length, context).toBe(2);
        const history = upstream[1]!.body.messages as ChatToolMessage[];
        const call = history.find((m) => m.role === "assistant" && m.tool_calls?.length);
        expect(call?.tool_calls?.[0], JSON.stringify(history).slice(-3_000)).toMatchObject({ id: "call_read_1", function: { name: "Read" } });
        expect(JSON.parse(call!.tool_calls![0]!.function.arguments)).toEqual({ file_path: file });
        const output = history.find((m) => m.role === "tool" && m.tool_call_id === "call_read_1");
        expect(output, JSON.stringify(history).slice(-3_000)).toBeDefined();
        expect(JSON.stringify(output!.content)).toContain("8675309");
        expect(proxy.attempts).toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "with thinking on: thinking goes up as reasoning_effort, streamed reasoning comes back as thinking, and the Read tool loop completes",
      async () => {
        const cwd = tempDir("claude-cwd-");
        const file = join(cwd, "note.txt");
        writeFileSync(file, "the secret number is 1234\n");
        mock.handler = (req, res) => {
          const messages = req.body.messages as ChatToolMessage[];
          if (!messages.some((m) => m.role === "tool")) {
            return chatStream(
              req,
              res,
              [
                { reasoning_content: "The user wants the note; " },
                { reasoning_content: "read it." },
                { tool_calls: [{ index: 0, id: "call_think_1", type: "function", function: { name: "Read", arguments: JSON.stringify({ file_path: file }) } }] },
              ],
              { finish: "tool_calls", usage: { prompt_tokens: 50, completion_tokens: 30, total_tokens: 80, completion_tokens_details: { reasoning_tokens: 12 } } },
            );
          }
          return chatStream(req, res, [{ reasoning_content: "It says 1234." }, "The note says 1234."]);
        };
        const { run, context } = await claude({ model: "gpt-mock", prompt: "What does note.txt say?", cwd, args: ["--allowedTools", "Read"] });
        const out = result(run, context);
        expect(out, describeRun(run, context)).toMatchObject({ result: "The note says 1234.", is_error: false, subtype: "success" });

        const upstream = chatRequests();
        expect(upstream.length, context).toBe(2);
        for (const request of upstream) {
          // Claude Code 2.1 asks for thinking {type: "adaptive"}: it reaches the chat upstream as medium effort, never as `thinking`.
          expect(request.body.reasoning_effort, JSON.stringify(request.body).slice(0, 400)).toBe("medium");
          expect(request.body.thinking).toBeUndefined();
        }
        // The unsigned thinking Claude Code got back (from reasoning_content) is not sent to the chat upstream.
        const history = upstream[1]!.body.messages as ChatToolMessage[];
        expect(JSON.stringify(history)).not.toContain("The user wants the note");
        expect(history.find((m) => m.role === "tool" && m.tool_call_id === "call_think_1")?.content).toContain("1234");
        expect(
          messagesPosts().every((p) => p.status === 200),
          context,
        ).toBe(true);
        expect(proxy.attempts).toEqual([]);
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "recovers from a stream cut mid-way: the error event makes it retry without streaming",
      async () => {
        let streams = 0;
        mock.handler = (req, res) => {
          if (!req.body.stream) return json(res, 200, chatCompletion(ANSWER));
          streams += 1;
          // The first stream breaks after one piece: the bridge must end it with an error event
          // (not a silent end that Claude Code would take as a finished, truncated answer).
          if (streams === 1) return chatStream(req, res, ["PONG-", "partial", "never sent"], { stopAfter: 1, delayMs: 10 });
          return chatStream(req, res, [ANSWER]);
        };
        const { run, context } = await claude({ model: "gpt-mock", prompt: "Say the magic word.", args: ["--tools", ""] });
        const out = result(run, context);
        expect(out, describeRun(run, context)).toMatchObject({ result: ANSWER, is_error: false });
        const upstream = chatRequests();
        // The broken first attempt was retried (Claude Code 2.1 falls back to a non-streaming request).
        expect(upstream[0]!.body.stream, context).toBe(true);
        expect(upstream.length, context).toBeGreaterThanOrEqual(2);
        expect(
          messagesPosts().every((p) => p.status === 200),
          context,
        ).toBe(true);
      },
      TEST_TIMEOUT_MS,
    );
  });

  it(
    "fails fast on an unknown model: the gateway's 404 ends the run instead of a retry loop",
    async () => {
      mock.handler = (_req, res) => json(res, 500, { error: { message: "the upstream must not be called" } });
      const { run, context } = await claude({ model: "no-such-model", prompt: "Say the magic word.", args: ["--tools", ""] });
      expect(run.timedOut, describeRun(run, context)).toBe(false);
      expect(run.code, describeRun(run, context)).not.toBe(0);
      expect(run.ms, describeRun(run, context)).toBeLessThan(30_000);
      const out = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as { is_error?: boolean; api_error_status?: number };
      expect(out, describeRun(run, context)).toMatchObject({ is_error: true, api_error_status: 404 });
      const posts = messagesPosts();
      expect(posts.length, context).toBeGreaterThanOrEqual(1);
      expect(
        posts.every((p) => p.status === 404 && p.url === "/v1/messages?beta=true"),
        context,
      ).toBe(true);
      expect(mock.requests).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
