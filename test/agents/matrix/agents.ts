// The compatibility matrix's clients and features: how each client does each feature against the
// gateway, and what the cell checks on both ends (what the client printed or returned, what the
// upstream mock saw). A check that does not hold throws a CellFailure with the reason.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { generateText, jsonSchema, stepCountIs, streamText, tool, type LanguageModel } from "ai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { claudeBinary, codexLauncher, isolatedEnv, runAgent, tempDir, type AgentRun, type ProxyTrap } from "../support.js";
import type { MatrixUpstream, Reply, SeenUpstream } from "./upstreams.js";

const require = createRequire(import.meta.url);
// The SDK's warnings (options a model id it does not know cannot take) would flood the test log.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

export const FEATURES = [
  { id: "plain", name: "Plain turn" },
  { id: "streaming", name: "Streaming" },
  { id: "tools", name: "Tool loop" },
  { id: "images", name: "Images" },
  { id: "reasoning", name: "Reasoning" },
  { id: "caching", name: "Prompt caching" },
  { id: "abort", name: "Abort" },
] as const;
export type Feature = (typeof FEATURES)[number]["id"];

export class CellFailure extends Error {}
export class NotApplicable extends Error {}

export function check(condition: unknown, reason: string): asserts condition {
  if (!condition) throw new CellFailure(reason);
}

export interface CellContext {
  gatewayUrl: string;
  key: string;
  /** The gateway model (and upstream model) of this cell. */
  model: string;
  upstream: MatrixUpstream;
  proxy: ProxyTrap;
}

export interface Client {
  id: string;
  name: string;
  /** The npm packages whose installed versions the matrix reports. */
  packages: string[];
  run(feature: Feature, ctx: CellContext): Promise<void>;
}

export const ANSWER = "PONG-6061 from the mock";
const ANSWER_PIECES = ["PONG-", "6061 ", "from the mock"];
export const TOOL_SECRET = "MATRIX-5150";
const TOOL_ANSWER = "The tool said MATRIX-5150.";
const REASONING = "REASON-77: the user wants the magic word";
export const CACHED_TOKENS = 1000;
// A 1x1 PNG.
export const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");

export function installedVersion(name: string): string {
  // A package whose exports hide package.json (@google/genai) is found on the resolver's paths instead.
  const candidates = (require.resolve.paths(name) ?? []).map((dir) => join(dir, name, "package.json"));
  for (const file of candidates) {
    try {
      return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
    } catch {
      // not in this node_modules
    }
  }
  return "not installed";
}

const seenOf = (ctx: CellContext): SeenUpstream[] => ctx.upstream.seen.get(ctx.model) ?? [];
const setScript = (ctx: CellContext, script: (req: SeenUpstream) => Reply): void => {
  ctx.upstream.scripts.set(ctx.model, script);
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The upstream script of a feature; the tool loop asks for `toolCall` until a result comes back. */
export function scriptFor(feature: Feature, ctx: CellContext, toolCall: { name: string; args: object }): void {
  switch (feature) {
    case "plain":
    case "streaming":
    case "images":
      return setScript(ctx, () => ({ text: ANSWER_PIECES }));
    case "tools":
      return setScript(ctx, (req) =>
        req.toolResults.length === 0 ? { text: [], toolCall: { id: "call_matrix_1", ...toolCall } } : { text: ["The tool said ", `${TOOL_SECRET}.`] },
      );
    case "reasoning":
      return setScript(ctx, () => ({ text: ANSWER_PIECES, reasoning: REASONING }));
    case "caching":
      return setScript(ctx, () => ({ text: ANSWER_PIECES, cachedTokens: CACHED_TOKENS }));
    case "abort":
      return setScript(ctx, () => ({ text: [], slow: true }));
  }
}

function describeSeen(ctx: CellContext): string {
  return `upstream saw ${JSON.stringify(seenOf(ctx).map((s) => `${s.path} stream=${s.stream} tools=${s.toolResults.length} images=${s.images} aborted=${s.aborted}`))}`;
}

export function checkToolLoop(ctx: CellContext, answer: string): void {
  const seen = seenOf(ctx);
  const withResult = seen.find((s) => s.toolResults.some((r) => r.includes(TOOL_SECRET)));
  check(withResult, `the upstream never got the tool's result back; ${describeSeen(ctx)}`);
  check(answer.trim() === TOOL_ANSWER, `final answer ${JSON.stringify(answer.slice(0, 200))}, expected ${JSON.stringify(TOOL_ANSWER)}`);
}

export function checkImageReached(ctx: CellContext): void {
  check(
    seenOf(ctx).some((s) => s.images > 0),
    `no image reached the upstream; ${describeSeen(ctx)}`,
  );
}

/** After the client gave up on a slow stream, the gateway must close its upstream request too. */
export async function checkUpstreamAborted(ctx: CellContext): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Date.now() < deadline) {
    if (seenOf(ctx).some((s) => s.aborted)) return;
    await sleep(50);
  }
  throw new CellFailure(`the upstream request was still open 5 s after the client aborted; ${describeSeen(ctx)}`);
}

async function waitForUpstream(ctx: CellContext, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (seenOf(ctx).length > 0) return true;
    await sleep(50);
  }
  return false;
}

export function runSummary(run: AgentRun): string {
  const tail = (s: string) => s.trim().slice(-600);
  return `exit=${run.code} timedOut=${run.timedOut} stdout…${tail(run.stdout)} stderr…${tail(run.stderr)}`;
}

export function jsonLines(text: string): Array<Record<string, any>> {
  return text
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, any>];
      } catch {
        return [];
      }
    });
}

export const RUN_TIMEOUT_MS = 60_000;

// ---------------------------------------------------------------- Claude Code

export async function claude(ctx: CellContext, options: { prompt?: string; args: string[]; input?: string; cwd?: string; signal?: AbortSignal }): Promise<AgentRun> {
  const binary = claudeBinary();
  check(binary, "the @anthropic-ai/claude-code native binary is missing: run npm install");
  const home = tempDir("matrix-claude-");
  mkdirSync(join(home, ".claude"), { recursive: true });
  const env: Record<string, string> = {
    ...isolatedEnv(home, ctx.proxy),
    ANTHROPIC_BASE_URL: ctx.gatewayUrl,
    ANTHROPIC_API_KEY: ctx.key,
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    ANTHROPIC_MODEL: ctx.model,
    ANTHROPIC_SMALL_FAST_MODEL: ctx.model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: ctx.model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: ctx.model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: ctx.model,
    CLAUDE_CODE_MAX_OUTPUT_TOKENS: "4096",
  };
  const args = ["-p", ...(options.prompt === undefined ? [] : [options.prompt]), "--no-session-persistence", ...options.args];
  return runAgent(binary, args, { env, cwd: options.cwd ?? tempDir("matrix-claude-cwd-"), timeoutMs: RUN_TIMEOUT_MS, input: options.input, signal: options.signal });
}

function claudeResult(run: AgentRun): Record<string, any> {
  const result = jsonLines(run.stdout).findLast((l) => l.type === "result");
  check(run.code === 0 && result, `Claude Code did not finish: ${runSummary(run)}`);
  check(result.is_error === false, `Claude Code reported an error: ${String(result.result).slice(0, 300)}`);
  return result;
}

const STREAM_JSON = ["--output-format", "stream-json", "--verbose"];

export const claudeCode: Client = {
  id: "claude-code",
  name: "Claude Code",
  packages: ["@anthropic-ai/claude-code"],
  async run(feature, ctx) {
    const cwd = tempDir("matrix-claude-cwd-");
    const file = join(cwd, "note.txt");
    writeFileSync(file, `the secret is ${TOOL_SECRET}\n`);
    scriptFor(feature, ctx, { name: "Read", args: { file_path: file } });
    const noTools = ["--tools", ""];
    switch (feature) {
      case "plain": {
        const out = claudeResult(await claude(ctx, { prompt: "Say the magic word.", args: [...STREAM_JSON, ...noTools] }));
        check(out.result === ANSWER, `answer ${JSON.stringify(out.result)}`);
        return;
      }
      case "streaming": {
        const run = await claude(ctx, { prompt: "Say the magic word.", args: [...STREAM_JSON, "--include-partial-messages", ...noTools] });
        const out = claudeResult(run);
        const deltas = jsonLines(run.stdout).filter((l) => l.type === "stream_event" && l.event?.delta?.type === "text_delta");
        check(deltas.length >= 2, `${deltas.length} text deltas reached Claude Code, expected the answer in pieces`);
        check(out.result === ANSWER, `answer ${JSON.stringify(out.result)}`);
        return;
      }
      case "tools": {
        const out = claudeResult(await claude(ctx, { prompt: "What does note.txt say?", cwd, args: [...STREAM_JSON, "--allowedTools", "Read"] }));
        return checkToolLoop(ctx, String(out.result));
      }
      case "images": {
        const message = {
          type: "user",
          message: {
            role: "user",
            content: [
              { type: "text", text: "Say the magic word about this image." },
              { type: "image", source: { type: "base64", media_type: "image/png", data: PNG.toString("base64") } },
            ],
          },
        };
        const out = claudeResult(await claude(ctx, { args: ["--input-format", "stream-json", ...STREAM_JSON, ...noTools], input: `${JSON.stringify(message)}\n` }));
        checkImageReached(ctx);
        check(out.result === ANSWER, `answer ${JSON.stringify(out.result)}`);
        return;
      }
      case "reasoning": {
        const run = await claude(ctx, { prompt: "Think, then say the magic word.", args: [...STREAM_JSON, ...noTools] });
        claudeResult(run);
        const thinking = jsonLines(run.stdout)
          .filter((l) => l.type === "assistant")
          .flatMap((l) => (l.message?.content ?? []) as Array<Record<string, unknown>>)
          .filter((b) => b.type === "thinking")
          .map((b) => String(b.thinking));
        check(thinking.join("").includes("REASON-77"), `no thinking block with the upstream's reasoning reached Claude Code (${thinking.length} thinking blocks)`);
        return;
      }
      case "caching": {
        const out = claudeResult(await claude(ctx, { prompt: "Say the magic word.", args: [...STREAM_JSON, ...noTools] }));
        const cached = Number(out.usage?.cache_read_input_tokens ?? 0);
        check(cached === CACHED_TOKENS, `Claude Code saw cache_read_input_tokens=${cached}, the upstream reported ${CACHED_TOKENS}`);
        return;
      }
      case "abort":
        return abortCli(ctx, (signal) => claude(ctx, { prompt: "Say the magic word.", args: [...STREAM_JSON, ...noTools], signal }));
    }
  },
};

/** Starts the CLI, interrupts it (SIGINT to its group) once its request reached the upstream. */
export async function abortCli(ctx: CellContext, start: (signal: AbortSignal) => Promise<AgentRun>): Promise<void> {
  const controller = new AbortController();
  const running = start(controller.signal);
  const reached = await Promise.race([waitForUpstream(ctx, 45_000), running.then(() => false)]);
  if (!reached) throw new CellFailure(`the request never reached the upstream: ${runSummary(await running)}`);
  await sleep(1_000);
  controller.abort();
  await running;
  await checkUpstreamAborted(ctx);
}

// ---------------------------------------------------------------- Codex CLI

async function codex(
  ctx: CellContext,
  options: { prompt: string; extraConfig?: string[]; args?: string[]; cwd?: string; signal?: AbortSignal },
): Promise<{ run: AgentRun; last: string }> {
  const launcher = codexLauncher();
  check(launcher, "@openai/codex is missing: run npm install");
  const home = tempDir("matrix-codex-");
  const codexHome = join(home, ".codex");
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, "config.toml"),
    [
      `model = "${ctx.model}"`,
      `model_provider = "gateway"`,
      `approval_policy = "never"`,
      `sandbox_mode = "read-only"`,
      ...(options.extraConfig ?? []),
      ``,
      `[model_providers.gateway]`,
      `name = "Model Gateway"`,
      `base_url = "${ctx.gatewayUrl}/v1"`,
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
  const lastFile = join(home, "last-message.txt");
  const env = { ...isolatedEnv(home, ctx.proxy), CODEX_HOME: codexHome, MODEL_GATEWAY_KEY: ctx.key };
  const args = [launcher, "exec", "--strict-config", "--skip-git-repo-check", "--ephemeral", "--color", "never", "--json", "-o", lastFile, ...(options.args ?? []), options.prompt];
  const run = await runAgent(process.execPath, args, { env, cwd: options.cwd ?? tempDir("matrix-codex-cwd-"), timeoutMs: RUN_TIMEOUT_MS, signal: options.signal });
  let last = "";
  try {
    last = readFileSync(lastFile, "utf8");
  } catch {
    // Written only when a turn completed; the checks say so with the run's output.
  }
  return { run, last };
}

function codexDone(result: { run: AgentRun; last: string }): Array<Record<string, any>> {
  check(result.run.code === 0, `Codex did not finish: ${runSummary(result.run)}`);
  return jsonLines(result.run.stdout);
}

export const codexCli: Client = {
  id: "codex",
  name: "Codex CLI",
  packages: ["@openai/codex"],
  async run(feature, ctx) {
    scriptFor(feature, ctx, { name: "exec_command", args: { cmd: `echo ${TOOL_SECRET}` } });
    switch (feature) {
      case "plain": {
        const result = await codex(ctx, { prompt: "Say the magic word." });
        codexDone(result);
        check(result.last.trim() === ANSWER, `answer ${JSON.stringify(result.last)}`);
        return;
      }
      case "streaming": {
        // codex exec prints whole items only: the stream is checked on the wire (Codex always asks
        // for one) and by the answer being assembled from the upstream's three deltas.
        const result = await codex(ctx, { prompt: "Say the magic word." });
        codexDone(result);
        check(result.last.trim() === ANSWER, `answer ${JSON.stringify(result.last)}`);
        check(
          seenOf(ctx).some((s) => s.stream),
          `the gateway did not stream from the upstream; ${describeSeen(ctx)}`,
        );
        return;
      }
      case "tools": {
        const result = await codex(ctx, { prompt: "Run the command and tell me what it printed." });
        codexDone(result);
        return checkToolLoop(ctx, result.last);
      }
      case "images": {
        const image = join(tempDir("matrix-codex-img-"), "pixel.png");
        writeFileSync(image, PNG);
        const result = await codex(ctx, { prompt: "Say the magic word about this image.", args: ["--image", image, "--"] });
        codexDone(result);
        checkImageReached(ctx);
        check(result.last.trim() === ANSWER, `answer ${JSON.stringify(result.last)}`);
        return;
      }
      case "reasoning": {
        const result = await codex(ctx, { prompt: "Think, then say the magic word.", extraConfig: [`model_reasoning_summary = "detailed"`] });
        const events = codexDone(result);
        const reasoning = events.filter((e) => e.type === "item.completed" && e.item?.type === "reasoning").map((e) => String(e.item.text));
        check(reasoning.join("").includes("REASON-77"), `no reasoning item with the upstream's reasoning reached Codex (${reasoning.length} reasoning items)`);
        return;
      }
      case "caching": {
        const events = codexDone(await codex(ctx, { prompt: "Say the magic word." }));
        const usage = events.findLast((e) => e.type === "turn.completed")?.usage as Record<string, number> | undefined;
        check(usage?.cached_input_tokens === CACHED_TOKENS, `Codex saw cached_input_tokens=${usage?.cached_input_tokens}, the upstream reported ${CACHED_TOKENS}`);
        return;
      }
      case "abort":
        return abortCli(ctx, async (signal) => (await codex(ctx, { prompt: "Say the magic word.", signal })).run);
    }
  },
};

// ---------------------------------------------------------------- Vercel AI SDK

type AiSdkProvider = "openai-responses" | "openai-chat" | "anthropic";

function aiSdkModel(provider: AiSdkProvider, ctx: CellContext): LanguageModel {
  if (provider === "anthropic") return createAnthropic({ apiKey: ctx.key, baseURL: `${ctx.gatewayUrl}/v1` })(ctx.model);
  const openai = createOpenAI({ apiKey: ctx.key, baseURL: `${ctx.gatewayUrl}/v1` });
  return provider === "openai-chat" ? openai.chat(ctx.model) : openai.responses(ctx.model);
}

function aiSdkClient(provider: AiSdkProvider, name: string, providerPackage: string): Client {
  return {
    id: `ai-sdk-${provider}`,
    name,
    packages: ["ai", providerPackage],
    async run(feature, ctx) {
      const model = aiSdkModel(provider, ctx);
      scriptFor(feature, ctx, { name: "lookup", args: { key: "door" } });
      const common = { model, maxRetries: 0 } as const;
      switch (feature) {
        case "plain": {
          const result = await generateText({ ...common, prompt: "Say the magic word." });
          check(result.text === ANSWER, `answer ${JSON.stringify(result.text)}`);
          return;
        }
        case "streaming": {
          const result = streamText({ ...common, prompt: "Say the magic word.", onError: () => undefined });
          const chunks: string[] = [];
          for await (const chunk of result.textStream) chunks.push(chunk);
          check(chunks.length >= 2, `${chunks.length} text chunks, expected the answer in pieces`);
          check(chunks.join("") === ANSWER, `answer ${JSON.stringify(chunks.join(""))}`);
          return;
        }
        case "tools": {
          const lookup = tool({
            description: "Looks a key up.",
            inputSchema: jsonSchema<{ key: string }>({ type: "object", properties: { key: { type: "string" } }, required: ["key"], additionalProperties: false }),
            execute: async ({ key }) => `the ${key} secret is ${TOOL_SECRET}`,
          });
          const result = await generateText({ ...common, prompt: "Look the door up.", tools: { lookup }, stopWhen: stepCountIs(4) });
          return checkToolLoop(ctx, result.text);
        }
        case "images": {
          const result = await generateText({
            ...common,
            messages: [
              {
                role: "user",
                content: [
                  { type: "text", text: "Say the magic word about this image." },
                  { type: "image", image: PNG, mediaType: "image/png" },
                ],
              },
            ],
          });
          checkImageReached(ctx);
          check(result.text === ANSWER, `answer ${JSON.stringify(result.text)}`);
          return;
        }
        case "reasoning": {
          const result = await generateText({
            ...common,
            prompt: "Think, then say the magic word.",
            providerOptions: {
              anthropic: { thinking: { type: "enabled", budgetTokens: 1024 } },
              // The SDK treats ids it does not know as non-reasoning models and would drop both options.
              openai: { reasoningEffort: "low", reasoningSummary: "auto", forceReasoning: true },
            },
          });
          check((result.reasoningText ?? "").includes("REASON-77"), `reasoningText ${JSON.stringify(result.reasoningText ?? null)}`);
          check(result.text === ANSWER, `answer ${JSON.stringify(result.text)}`);
          return;
        }
        case "caching": {
          const result = await generateText({ ...common, prompt: "Say the magic word." });
          const cached = result.usage.inputTokenDetails?.cacheReadTokens ?? result.usage.cachedInputTokens;
          check(cached === CACHED_TOKENS, `usage reports ${cached} cached input tokens, the upstream reported ${CACHED_TOKENS}`);
          return;
        }
        case "abort": {
          const controller = new AbortController();
          const result = streamText({ ...common, prompt: "Say the magic word.", abortSignal: controller.signal, onError: () => undefined });
          let chunks = 0;
          try {
            for await (const chunk of result.textStream) {
              if (!chunk) continue;
              chunks += 1;
              if (chunks === 2) controller.abort();
            }
          } catch {
            // The abort ends the stream with an AbortError.
          }
          check(chunks >= 2, `the slow stream delivered ${chunks} chunks before the abort, expected it to be streaming`);
          return checkUpstreamAborted(ctx);
        }
      }
    },
  };
}

export const CLIENTS: Client[] = [
  claudeCode,
  codexCli,
  aiSdkClient("openai-responses", "Vercel AI SDK, OpenAI provider (Responses)", "@ai-sdk/openai"),
  aiSdkClient("openai-chat", "Vercel AI SDK, OpenAI provider (Chat)", "@ai-sdk/openai"),
  aiSdkClient("anthropic", "Vercel AI SDK, Anthropic provider", "@ai-sdk/anthropic"),
];
