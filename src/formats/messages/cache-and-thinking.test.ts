// Prompt-cache breakpoints and extended thinking on the Chat -> Messages request bridge, and cache
// markers through the Chat interchange (Messages -> Chat -> Messages).
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/catalogue.js";
import type { ChatRequest } from "../../wire/chat/types.js";
import { toGolden } from "../../wire/shared/read-fixture.test-kit.js";
import { THINKING_BUDGET_BY_EFFORT } from "../../wire/shared/reasoning.js";
import { MAX_CACHE_BREAKPOINTS } from "../../wire/messages/cache-breakpoints.js";
import { convertChatRequestToMessages, type ChatToMessagesRequestOptions } from "../../upstreams/anthropic/convert-chat-request-to-messages.js";
import { convertMessagesRequestToChat } from "./convert-messages-request-to-chat.js";
import type { AnthropicMessagesRequest } from "../../wire/messages/types.js";

const OPTIONS: ChatToMessagesRequestOptions = { defaultMaxTokens: 4096, maxOutputTokens: 64000 };
const TOOL = { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } } as const;
const SIGNED = { type: "thinking", thinking: "Call the tool.", signature: "sig-1" } as const;

/** A tool loop three turns in: the last assistant turn carries its signed thinking. */
function toolLoop(extra: Partial<ChatRequest> = {}): ChatRequest {
  return {
    model: "claude",
    messages: [
      { role: "system", content: "Be brief." },
      { role: "user", content: "Weather in Oslo?" },
      {
        role: "assistant",
        content: null,
        reasoning_content: "Call the tool.",
        thinking_blocks: [SIGNED],
        tool_calls: [{ id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
      },
      { role: "tool", tool_call_id: "toolu_1", content: "12C" },
    ],
    tools: [TOOL],
    ...extra,
  };
}

function breakpoints(request: AnthropicMessagesRequest): string[] {
  const found: string[] = [];
  request.tools?.forEach((tool, i) => tool.cache_control && found.push(`tools[${i}]`));
  if (Array.isArray(request.system)) request.system.forEach((block, i) => block.cache_control && found.push(`system[${i}]`));
  request.messages.forEach((turn, i) => {
    if (Array.isArray(turn.content)) turn.content.forEach((block, j) => "cache_control" in block && block.cache_control && found.push(`messages[${i}][${j}]`));
  });
  return found;
}

describe("cache breakpoints on Chat -> Messages", () => {
  it("auto: the last tool, the system prompt, the last turn and the user turn before it (golden, with thinking)", async () => {
    const { request, warnings } = convertChatRequestToMessages(
      toolLoop({
        messages: [...toolLoop().messages, { role: "assistant", content: "Oslo: 12C." }, { role: "user", content: "And Bergen?" }],
        reasoning_effort: "low",
        max_tokens: 16000,
        stream: true,
      }),
      OPTIONS,
    );
    expect(breakpoints(request)).toEqual(["tools[0]", "system[0]", "messages[2][0]", "messages[4][0]"]);
    expect(breakpoints(request).length).toBeLessThanOrEqual(MAX_CACHE_BREAKPOINTS);
    await expect(toGolden({ request, warnings })).toMatchFileSnapshot("./__fixtures__/chat-request-cache-thinking.messages-request.golden.json");
  });

  it("auto in a tool loop marks the tool results and the first user turn: where the previous request put its last breakpoint", () => {
    const { request } = convertChatRequestToMessages(toolLoop(), OPTIONS);
    expect(breakpoints(request)).toEqual(["tools[0]", "system[0]", "messages[0][0]", "messages[2][0]"]);
    expect(request.messages[2]!.content).toEqual([{ type: "tool_result", tool_use_id: "toolu_1", content: "12C", cache_control: { type: "ephemeral" } }]);
  });

  it("never marks a thinking block", () => {
    const { request } = convertChatRequestToMessages(
      {
        model: "claude",
        messages: [
          { role: "user", content: "Hi" },
          { role: "assistant", content: null, thinking_blocks: [SIGNED] },
        ],
        reasoning_effort: "low",
      },
      OPTIONS,
    );
    expect(breakpoints(request)).toEqual(["messages[0][0]"]);
  });

  it("off: places none", () => {
    const { request } = convertChatRequestToMessages(toolLoop(), { ...OPTIONS, cacheBreakpoints: "off" });
    expect(breakpoints(request)).toEqual([]);
    expect(request.system).toBe("Be brief.");
  });

  it("keeps a client's markers (parts, message, tool) and adds none of its own", () => {
    const { request } = convertChatRequestToMessages(
      {
        model: "claude",
        messages: [
          {
            role: "system",
            content: [
              { type: "text", text: "Long manual.", cache_control: { type: "ephemeral", ttl: "1h" } },
              { type: "text", text: "Today is Monday." },
            ],
          },
          { role: "user", content: "Hi", cache_control: { type: "ephemeral" } },
          { role: "assistant", content: "Hello." },
          { role: "user", content: "More" },
        ],
        tools: [{ ...TOOL, cache_control: { type: "ephemeral" } }],
      },
      OPTIONS,
    );
    expect(breakpoints(request)).toEqual(["tools[0]", "system[0]", "messages[0][0]"]);
    expect(request.system).toEqual([
      { type: "text", text: "Long manual.", cache_control: { type: "ephemeral", ttl: "1h" } },
      { type: "text", text: "Today is Monday." },
    ]);
  });

  it("refuses more than four markers, and malformed ones, naming the field", () => {
    const marked = (text: string) => ({ type: "text" as const, text, cache_control: { type: "ephemeral" as const } });
    const five = { model: "claude", messages: [{ role: "user", content: ["a", "b", "c", "d", "e"].map(marked) }] };
    expect(() => convertChatRequestToMessages(five, OPTIONS)).toThrow(/At most 4 cache_control breakpoints/);
    const bad = { model: "claude", messages: [{ role: "user", content: [{ type: "text", text: "a", cache_control: { type: "persistent" } }] }] };
    expect(() => convertChatRequestToMessages(bad, OPTIONS)).toThrow(GatewayError);
    const ttl = { model: "claude", messages: [{ role: "user", content: "a", cache_control: { type: "ephemeral", ttl: "2h" } }] };
    expect(() => convertChatRequestToMessages(ttl, OPTIONS)).toThrow(/ttl must be "5m" or "1h"/);
  });
});

describe("reasoning_effort -> Anthropic thinking", () => {
  it.each(Object.entries(THINKING_BUDGET_BY_EFFORT))("%s: budget %i when max_tokens leaves room", (effort, budget) => {
    const { request } = convertChatRequestToMessages({ model: "claude", messages: [{ role: "user", content: "Hi" }], reasoning_effort: effort, max_tokens: 100_000 }, OPTIONS);
    expect(request.thinking).toEqual({ type: "enabled", budget_tokens: budget });
    expect(request.max_tokens).toBe(100_000);
  });

  it("without a client limit, adds the budget to the default limit, within the model's", () => {
    const medium = convertChatRequestToMessages({ model: "claude", messages: [{ role: "user", content: "Hi" }], reasoning_effort: "medium" }, OPTIONS).request;
    expect(medium).toMatchObject({ max_tokens: 4096 + 8192, thinking: { budget_tokens: 8192 } });
    const capped = convertChatRequestToMessages(
      { model: "claude", messages: [{ role: "user", content: "Hi" }], reasoning_effort: "high" },
      { ...OPTIONS, maxOutputTokens: 8192 },
    ).request;
    expect(capped).toMatchObject({ max_tokens: 8192, thinking: { budget_tokens: 4096 } });
  });

  it("keeps a client's limit: at most half of it is thinking, and below Anthropic's minimum thinking stays off", () => {
    const half = convertChatRequestToMessages({ model: "claude", messages: [{ role: "user", content: "Hi" }], reasoning_effort: "high", max_tokens: 5000 }, OPTIONS).request;
    expect(half).toMatchObject({ max_tokens: 5000, thinking: { budget_tokens: 2500 } });
    const small = convertChatRequestToMessages({ model: "claude", messages: [{ role: "user", content: "Hi" }], reasoning_effort: "high", max_tokens: 2000 }, OPTIONS);
    expect(small.request.thinking).toBeUndefined();
    expect(small.warnings).toContain("reasoning_effort: not sent, max_tokens must be at least 2048 for Anthropic thinking");
  });

  it("drops temperature and a low top_p with thinking on; keeps temperature 1 and top_p 0.95", () => {
    const hot = convertChatRequestToMessages({ model: "claude", messages: [{ role: "user", content: "Hi" }], reasoning_effort: "low", temperature: 0.2, top_p: 0.5 }, OPTIONS);
    expect(hot.request.temperature).toBeUndefined();
    expect(hot.request.top_p).toBeUndefined();
    expect(hot.warnings).toEqual(expect.arrayContaining([expect.stringMatching(/^temperature: dropped/), expect.stringMatching(/^top_p: dropped/)]));
    const allowed = convertChatRequestToMessages({ model: "claude", messages: [{ role: "user", content: "Hi" }], reasoning_effort: "low", temperature: 1, top_p: 0.95 }, OPTIONS);
    expect(allowed.request).toMatchObject({ temperature: 1, top_p: 0.95, thinking: { type: "enabled" } });
  });

  it("stays off where Anthropic refuses thinking: a forced tool, a tool loop without its signed thinking; none and absent send none", () => {
    const forced = convertChatRequestToMessages(toolLoop({ reasoning_effort: "low", tool_choice: "required" }), OPTIONS);
    expect(forced.request.thinking).toBeUndefined();
    const unsigned = toolLoop({ reasoning_effort: "low" });
    delete (unsigned.messages[2] as { thinking_blocks?: unknown }).thinking_blocks;
    const lost = convertChatRequestToMessages(unsigned, OPTIONS);
    expect(lost.request.thinking).toBeUndefined();
    expect(lost.warnings.join("\n")).toMatch(/without its thinking_blocks/);
    expect(lost.warnings.join("\n")).toMatch(/reasoning_content: not sent without its thinking_blocks/);
    for (const effort of ["none", undefined]) {
      const off = convertChatRequestToMessages(toolLoop({ reasoning_effort: effort as "none" | undefined }), OPTIONS).request;
      expect(off.thinking).toBeUndefined();
      // Thinking blocks only matter to a thinking request: without it they are left out.
      expect(JSON.stringify(off.messages)).not.toContain("thinking");
    }
  });

  it("sends signed thinking blocks back first in their assistant turn, verbatim", () => {
    const { request } = convertChatRequestToMessages(toolLoop({ reasoning_effort: "medium" }), OPTIONS);
    expect(request.messages[1]!.content).toEqual([SIGNED, { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }]);
    expect(request.thinking).toEqual({ type: "enabled", budget_tokens: 8192 });
  });

  it("refuses malformed thinking_blocks and an unknown effort", () => {
    const bad = toolLoop({ reasoning_effort: "low" });
    (bad.messages[2] as { thinking_blocks?: unknown }).thinking_blocks = [{ type: "thinking", thinking: "x" }];
    expect(() => convertChatRequestToMessages(bad, OPTIONS)).toThrow(/thinking_blocks\[0\]/);
    expect(() => convertChatRequestToMessages(toolLoop({ reasoning_effort: "extreme" as "high" }), OPTIONS)).toThrow(/reasoning_effort must be one of/);
  });
});

describe("Messages -> Chat -> Messages", () => {
  const messagesRequest = {
    model: "claude",
    max_tokens: 20000,
    system: [
      { type: "text", text: "Long manual.", cache_control: { type: "ephemeral", ttl: "1h" } },
      { type: "text", text: "Be brief." },
    ],
    messages: [
      { role: "user", content: [{ type: "text", text: "Weather in Oslo?", cache_control: { type: "ephemeral" } }] },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "12C", cache_control: { type: "ephemeral" } }] },
    ],
    tools: [{ name: "get_weather", input_schema: { type: "object", properties: {} }, cache_control: { type: "ephemeral" } }],
    thinking: { type: "enabled", budget_tokens: 16384 },
  };

  it("forward: every marker survives the Chat interchange at its place (golden)", async () => {
    const chat = convertMessagesRequestToChat(messagesRequest, { keepCacheControl: true, reasoningEffort: true });
    expect(chat.warnings).toEqual([]);
    expect(chat.request.reasoning_effort).toBe("high");
    const back = convertChatRequestToMessages(chat.request, OPTIONS).request;
    expect(back.system).toEqual(messagesRequest.system);
    expect(back.tools).toEqual(messagesRequest.tools);
    expect(back.messages).toEqual(messagesRequest.messages);
    await expect(toGolden(chat)).toMatchFileSnapshot("./__fixtures__/messages-request-cache.chat-request.golden.json");
  });

  it("without forward: markers and thinking are dropped with warnings, for an upstream that caches by itself", () => {
    const chat = convertMessagesRequestToChat(messagesRequest);
    expect(JSON.stringify(chat.request)).not.toContain("cache_control");
    expect(chat.request.reasoning_effort).toBeUndefined();
    expect(chat.warnings).toEqual(["cache_control: dropped (no Chat Completions equivalent)", "thinking: dropped (the upstream model takes no reasoning_effort)"]);
  });

  it.each([
    [1024, "low"],
    [4096, "low"],
    [8192, "medium"],
    [16384, "high"],
    [31999, "high"],
  ] as const)("thinking budget %i -> reasoning_effort %s", (budget, effort) => {
    const chat = convertMessagesRequestToChat({ ...messagesRequest, thinking: { type: "enabled", budget_tokens: budget } }, { reasoningEffort: true });
    expect(chat.request.reasoning_effort).toBe(effort);
  });
});
