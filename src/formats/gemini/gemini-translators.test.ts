// The Gemini client format's translators: golden fixtures both ways (a Gemini request to Chat, a Chat
// answer to Gemini, every Chat stream fixture to Gemini chunks) and the refusals, each naming its field.
import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/catalogue.js";
import { assembleChatStream } from "../../wire/chat/assemble-chat-stream.js";
import type { ChatCompletion, ChatCompletionChunk } from "../../wire/chat/types.js";
import type { GeminiResponse } from "../../wire/gemini/types.js";
import { CHAT_STREAM_FIXTURES, readFixture, toGolden } from "../../wire/shared/read-fixture.test-kit.js";
import { ChatStreamToGeminiChunks } from "./chat-stream-to-gemini-chunks.js";
import { convertChatResponseToGemini, convertChatUsageToGemini } from "./convert-chat-response-to-gemini.js";
import { convertGeminiRequestToChat, type GeminiToChatRequestOptions } from "./convert-gemini-request-to-chat.js";

const OPTIONS: GeminiToChatRequestOptions = { model: "gemini-client-model", stream: false, reasoningEffort: true, imageInput: true };

function refusal(body: Record<string, unknown>, options: Partial<GeminiToChatRequestOptions> = {}): { param: string | undefined; message: string } {
  try {
    convertGeminiRequestToChat(body, { ...OPTIONS, ...options });
  } catch (error) {
    if (error instanceof GatewayError) return { param: error.details.param, message: error.message };
    throw error;
  }
  throw new Error("not refused");
}

const text = (value: string) => ({ contents: [{ role: "user", parts: [{ text: value }] }] });

describe("Gemini request -> Chat", () => {
  it("translates the golden request (system, image, thoughts ignored, calls matched by id and by name, tools, config)", async () => {
    const body = readFixture<Record<string, unknown>>(import.meta.url, "./__fixtures__/tool-round-trip.gemini-request.json");
    const converted = convertGeminiRequestToChat(body, OPTIONS);
    expect(converted.warnings).toEqual(["safetySettings: ignored (the upstream applies its own safety policy)"]);
    expect(converted.includeThoughts).toBe(true);
    await expect(toGolden(converted.request)).toMatchFileSnapshot("./__fixtures__/tool-round-trip.chat-request.golden.json");
  });

  it("streams ask for usage; thinking is dropped with a warning where the upstream takes no effort", () => {
    const converted = convertGeminiRequestToChat(
      { ...text("hi"), generationConfig: { thinkingConfig: { thinkingBudget: 0 } } },
      { ...OPTIONS, stream: true, reasoningEffort: false },
    );
    expect(converted.request).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(converted.request.reasoning_effort).toBeUndefined();
    expect(converted.warnings).toEqual(["thinkingConfig: dropped (this model's upstream takes no reasoning effort)"]);
    expect(convertGeminiRequestToChat({ ...text("hi"), generationConfig: { thinkingConfig: { thinkingLevel: "LOW" } } }, OPTIONS).request.reasoning_effort).toBe("low");
    expect(convertGeminiRequestToChat({ ...text("hi"), generationConfig: { thinkingConfig: { thinkingBudget: -1 } } }, OPTIONS).request.reasoning_effort).toBeUndefined();
  });

  it("refuses what it cannot carry, naming the field", () => {
    expect(refusal({ ...text("x"), cachedContent: "cachedContents/1" }).param).toBe("cachedContent");
    expect(refusal({ ...text("x"), generationConfig: { candidateCount: 2 } }).param).toBe("generationConfig.candidateCount");
    expect(refusal({ ...text("x"), generationConfig: { responseLogprobs: true } }).param).toBe("generationConfig.responseLogprobs");
    expect(refusal({ ...text("x"), generationConfig: { responseModalities: ["IMAGE"] } }).param).toBe("generationConfig.responseModalities");
    expect(refusal({ ...text("x"), tools: [{ googleSearch: {} }] }).param).toBe("tools[0].googleSearch");
    expect(refusal({ contents: [{ role: "user", parts: [{ fileData: { fileUri: "gs://b/f" } }] }] }).param).toBe("contents[0].parts[0].fileData");
    expect(refusal({ contents: [{ role: "user", parts: [{ inlineData: { mimeType: "image/png", data: "AA==" } }] }] }, { imageInput: false }).param).toBe(
      "contents[0].parts[0].inlineData",
    );
    expect(refusal({ contents: [{ role: "user", parts: [{ functionResponse: { name: "nobody_called", response: {} } }] }] }).param).toBe("contents[0].parts[0].functionResponse");
    expect(refusal({ contents: [{ role: "system", parts: [{ text: "x" }] }] }).param).toBe("contents[0].role");
    expect(refusal({ ...text("x"), tools: [{ functionDeclarations: [{ name: "f", parameters: { type: "OBJECT", oneOf: [] } }] }] }).param).toBe(
      "tools[0].functionDeclarations[0].parameters.oneOf",
    );
    expect(refusal({ ...text("x"), toolConfig: { functionCallingConfig: { mode: "VALIDATED" } } }).param).toBe("toolConfig.functionCallingConfig.mode");
  });
});

describe("Chat answer -> Gemini", () => {
  const completion: ChatCompletion = {
    id: "chatcmpl-golden",
    object: "chat.completion",
    created: 1_760_000_000,
    model: "upstream-model",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: "Checking.",
          reasoning_content: "The user wants the weather.",
          tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }],
        },
        finish_reason: "tool_calls",
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 100, completion_tokens: 30, total_tokens: 130, prompt_tokens_details: { cached_tokens: 60 }, completion_tokens_details: { reasoning_tokens: 12 } },
  };

  it("matches the golden response (thought part, text, the call with its id, usageMetadata)", async () => {
    const response = convertChatResponseToGemini(completion, { model: "gemini-client-model", includeThoughts: true });
    await expect(toGolden(response)).toMatchFileSnapshot("./__fixtures__/tool-call.gemini-response.golden.json");
  });

  it("leaves thoughts out unless asked, and maps the finish reasons", () => {
    const response = convertChatResponseToGemini(completion, { model: "m", includeThoughts: false });
    expect(response.candidates![0]!.content!.parts!.some((part) => part.thought === true)).toBe(false);
    const finish = (reason: "length" | "content_filter" | "stop") =>
      convertChatResponseToGemini({ ...completion, choices: [{ ...completion.choices[0]!, finish_reason: reason }] }, { model: "m", includeThoughts: false }).candidates![0]!
        .finishReason;
    expect([finish("length"), finish("content_filter"), finish("stop")]).toEqual(["MAX_TOKENS", "SAFETY", "STOP"]);
    expect(convertChatUsageToGemini(completion.usage)).toEqual({
      promptTokenCount: 100,
      candidatesTokenCount: 18,
      thoughtsTokenCount: 12,
      cachedContentTokenCount: 60,
      totalTokenCount: 130,
    });
  });
});

describe("Chat stream -> Gemini chunks", () => {
  const replay = (chunks: ChatCompletionChunk[]) => {
    const machine = new ChatStreamToGeminiChunks({ model: "gemini-client-model", includeThoughts: true });
    return [...chunks.flatMap((chunk) => machine.push(chunk)), ...machine.finish()] as GeminiResponse[];
  };
  for (const name of CHAT_STREAM_FIXTURES) {
    const chunks = readFixture<ChatCompletionChunk[]>(import.meta.url, `../../wire/chat/__fixtures__/${name}.json`);
    it(`replays ${name} to the golden chunks`, async () => {
      await expect(toGolden(replay(chunks))).toMatchFileSnapshot(`./__fixtures__/${name}.gemini-chunks.golden.json`);
    });
    it(`${name}: the chunks' text and calls equal the fixture's assembled answer; the last chunk alone has the finish reason`, () => {
      const expected = assembleChatStream(chunks).choices[0]!.message;
      const out = replay(chunks);
      const parts = out.flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? []);
      expect(
        parts
          .filter((p) => p.thought !== true && p.text !== undefined)
          .map((p) => p.text)
          .join(""),
      ).toBe(expected.content ?? "");
      const calls = parts.filter((p) => p.functionCall !== undefined).map((p) => p.functionCall);
      expect(calls).toEqual((expected.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, args: JSON.parse(call.function.arguments || "{}") as unknown })));
      expect(out.filter((chunk) => chunk.candidates?.[0]?.finishReason !== undefined)).toEqual([out.at(-1)]);
    });
  }

  it("an abort ends the stream with Google's error object", () => {
    const machine = new ChatStreamToGeminiChunks({ model: "m", includeThoughts: false });
    expect(machine.abort("The upstream stream failed.", "provider_error")).toEqual([
      {
        error: {
          code: 502,
          message: "The upstream stream failed.",
          status: "UNAVAILABLE",
          details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "PROVIDER_ERROR", domain: "model-gateway", metadata: { type: "provider_error" } }],
        },
      },
    ]);
    expect(machine.finish()).toEqual([]);
  });
});
