// Prompt caching and reasoning across the bridges, end to end through the gateway with the official
// SDKs, against an Anthropic-native mock that refuses what Anthropic refuses (strict-anthropic.ts).
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { strictAnthropic, type StrictAnthropic } from "../support/strict-anthropic.js";

const EXTRA_MODELS = `
  - id: claude-nocache
    kind: chat
    provider: mockanthropic
    upstream_model: claude-upstream
    max_output_tokens: 8192
    prompt_caching: "off"
  - id: gpt-forward
    kind: chat
    provider: mockai
    upstream_model: upstream-gpt
    prompt_caching: forward
`;

const TOOL = { type: "function" as const, function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } };
type ChatMessageParam = OpenAI.Chat.ChatCompletionMessageParam & { thinking_blocks?: unknown[] };
/** The gateway's reasoning fields on a streamed delta (docs/clients.md, "Reasoning"). */
type ReasoningDelta = OpenAI.Chat.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string; thinking_blocks?: unknown[] };

describe("prompt caching and reasoning across bridges", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let strict: StrictAnthropic;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: EXTRA_MODELS }));
    const { raw } = await gateway.createAccount({ balance: "50", tier: "premium" });
    openai = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: raw, baseURL: gateway.url, maxRetries: 0 });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
    strict = strictAnthropic((turn) =>
      turn === 1
        ? { thinking: "Look the weather up.", redacted: true, tool: { id: "toolu_w1", name: "get_weather", input: { city: "Oslo" } } }
        : { thinking: "Answer.", text: "12C in Oslo." },
    );
    mock.handler = (req, res) => strict.handler(req, res);
  });

  const firstTurn: ChatMessageParam[] = [
    { role: "system", content: "You are a weather bot. ".repeat(40) },
    { role: "user", content: "Weather in Oslo?" },
  ];

  it("Chat, streamed: reasoning_content and signed thinking_blocks out, sent back, the tool loop continues with thinking and a cache read", async () => {
    const stream = await openai.chat.completions.create({
      model: "claude-mock",
      messages: firstTurn,
      tools: [TOOL],
      reasoning_effort: "low",
      stream: true,
      stream_options: { include_usage: true },
    });
    let reasoning = "";
    const thinkingBlocks: unknown[] = [];
    const calls: Array<{ id: string; name: string; args: string }> = [];
    for await (const chunk of stream) {
      const delta: ReasoningDelta | undefined = chunk.choices[0]?.delta;
      reasoning += delta?.reasoning_content ?? "";
      thinkingBlocks.push(...(delta?.thinking_blocks ?? []));
      for (const call of delta?.tool_calls ?? []) {
        if (call.id) calls.push({ id: call.id, name: call.function?.name ?? "", args: "" });
        calls[call.index]!.args += call.function?.arguments ?? "";
      }
    }
    expect(reasoning).toBe("Look the weather up.");
    expect(thinkingBlocks).toEqual([
      { type: "thinking", thinking: "Look the weather up.", signature: expect.any(String) },
      { type: "redacted_thinking", data: expect.stringMatching(/^redacted:/) },
    ]);
    expect(mock.requests[0]!.body.thinking).toEqual({ type: "enabled", budget_tokens: 4096 });

    const second = await openai.chat.completions.create({
      model: "claude-mock",
      messages: [
        ...firstTurn,
        {
          role: "assistant",
          content: null,
          thinking_blocks: thinkingBlocks,
          tool_calls: calls.map((c) => ({ id: c.id, type: "function" as const, function: { name: c.name, arguments: c.args } })),
        },
        { role: "tool", tool_call_id: calls[0]!.id, content: "12C" },
      ] as ChatMessageParam[],
      tools: [TOOL],
      reasoning_effort: "low",
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of second) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.usage) usage = chunk.usage;
    }
    expect(strict.refusals).toEqual([]);
    expect(text).toBe("12C in Oslo.");
    expect(strict.turns.map((t) => t.thinking)).toEqual([true, true]);
    expect(strict.turns[1]!.cacheRead).toBeGreaterThan(0);
    expect(usage?.prompt_tokens_details?.cached_tokens).toBe(strict.turns[1]!.cacheRead);
    expect(usage?.completion_tokens_details?.reasoning_tokens).toBeGreaterThan(0);
  });

  it("Chat, buffered: the message carries reasoning_content and thinking_blocks; usage reports cache reads and writes", async () => {
    const first = await openai.chat.completions.create({ model: "claude-mock", messages: firstTurn, tools: [TOOL], reasoning_effort: "medium" });
    const message = first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessage & { reasoning_content?: string; thinking_blocks?: unknown[] };
    expect(message.reasoning_content).toBe("Look the weather up.");
    expect(message.thinking_blocks).toHaveLength(2);
    expect((first.usage?.prompt_tokens_details as { cache_write_tokens?: number }).cache_write_tokens).toBe(strict.turns[0]!.cacheWrite);
    const second = await openai.chat.completions.create({
      model: "claude-mock",
      messages: [...firstTurn, message, { role: "tool", tool_call_id: message.tool_calls![0]!.id, content: "12C" }],
      tools: [TOOL],
      reasoning_effort: "medium",
    });
    expect(strict.refusals).toEqual([]);
    expect(second.choices[0]!.message.content).toBe("12C in Oslo.");
    expect(second.usage?.prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
  });

  it("Responses, stored: previous_response_id continues the tool loop with the stored thinking; usage reports cache reads", async () => {
    const first = await openai.responses.create({
      model: "claude-mock",
      instructions: "You are a weather bot. ".repeat(40),
      input: "Weather in Oslo?",
      tools: [{ type: "function", name: "get_weather", parameters: TOOL.function.parameters, strict: false }],
      reasoning: { effort: "low" },
    });
    const reasoning = first.output.find((item) => item.type === "reasoning");
    expect(reasoning?.summary).toEqual([{ type: "summary_text", text: "Look the weather up." }]);
    expect(reasoning?.encrypted_content).toMatch(/^gw-thinking-v1\./);
    const call = first.output.find((item) => item.type === "function_call");
    const second = await openai.responses.create({
      model: "claude-mock",
      instructions: "You are a weather bot. ".repeat(40),
      previous_response_id: first.id,
      input: [{ type: "function_call_output", call_id: call!.call_id, output: "12C" }],
      tools: [{ type: "function", name: "get_weather", parameters: TOOL.function.parameters, strict: false }],
      reasoning: { effort: "low" },
    });
    expect(strict.refusals).toEqual([]);
    expect(second.output_text).toBe("12C in Oslo.");
    expect(strict.turns.map((t) => t.thinking)).toEqual([true, true]);
    expect(second.usage?.input_tokens_details.cached_tokens).toBe(strict.turns[1]!.cacheRead);
    expect(second.usage?.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    expect(second.usage?.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
  });

  it("holds the output the thinking budget adds when the client set no limit, so the hold bounds the cost", async () => {
    let heldTokens: bigint | undefined;
    mock.handler = async (req, res) => {
      // The request is in flight: its hold is in the table.
      const holds = await gateway.app.ctx.store.db.selectFrom("holds").select("tokens").execute();
      heldTokens = holds.reduce((sum, h) => sum + BigInt(h.tokens), 0n);
      await strict.handler(req, res);
    };
    await openai.chat.completions.create({ model: "claude-mock", messages: firstTurn, reasoning_effort: "high", tools: [TOOL] });
    const sent = mock.requests.at(-1)!.body as { max_tokens: number; thinking?: { budget_tokens: number } };
    expect(sent.thinking?.budget_tokens).toBeGreaterThan(0);
    // The hold's tokens are the prompt estimate plus the projected output: at least what was sent as max_tokens.
    expect(heldTokens).toBeGreaterThanOrEqual(BigInt(sent.max_tokens));
  });

  it("prompt_caching: off places no breakpoint", async () => {
    await openai.chat.completions.create({ model: "claude-nocache", messages: firstTurn, tools: [TOOL] });
    expect(JSON.stringify(mock.requests[0]!.body)).not.toContain("cache_control");
    expect(strict.turns[0]!.breakpoints).toBe(0);
  });

  it("a Messages client's cache_control reaches a chat upstream with prompt_caching: forward, and only there", async () => {
    mock.handler = (_req, res) => json(res, 200, chatCompletion("ok"));
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: "gpt-forward",
      max_tokens: 100,
      system: [{ type: "text", text: "Long manual.", cache_control: { type: "ephemeral", ttl: "1h" } }],
      messages: [{ role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] }],
    };
    await anthropic.messages.create(params);
    expect(mock.requests[0]!.body.messages).toEqual([
      { role: "system", content: [{ type: "text", text: "Long manual.", cache_control: { type: "ephemeral", ttl: "1h" } }] },
      { role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] },
    ]);
    const response = await anthropic.messages.create({ ...params, model: "gpt-mock" }).asResponse();
    expect(JSON.stringify(mock.requests[1]!.body)).not.toContain("cache_control");
    expect(response.headers.get("x-gateway-warnings")).toMatch(/cache_control: dropped/);
  });
});
