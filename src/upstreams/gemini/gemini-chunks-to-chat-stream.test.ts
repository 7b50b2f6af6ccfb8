import { describe, expect, it } from "vitest";
import { assembleChatStream } from "../../wire/chat/assemble-chat-stream.js";
import type { ChatCompletionChunk } from "../../wire/chat/types.js";
import { readFixture, toGolden } from "../../wire/shared/read-fixture.test-kit.js";
import { convertGeminiResponseToChat } from "./convert-gemini-response-to-chat.js";
import type { ChatStreamItem } from "../chat-chunk-stream.js";
import { GeminiChunksToChatStream } from "./gemini-chunks-to-chat-stream.js";
import type { GeminiResponse } from "../../wire/gemini/types.js";

const FIXTURES = ["stream-text-and-tools", "stream-max-tokens"] as const;
const options = { id: "chatcmpl-fixed", created: 1760000000, model: "gemini-via-gateway", callIdSeed: "golden" };

const eventsOf = (name: string) => readFixture<GeminiResponse[]>(import.meta.url, `./__fixtures__/${name}.json`);

function replay(events: GeminiResponse[]): ChatStreamItem[] {
  const machine = new GeminiChunksToChatStream(options);
  return [...events.flatMap((event) => machine.push(event)), ...machine.finish()];
}

const chunksOnly = (items: ChatStreamItem[]) => items.filter((item): item is ChatCompletionChunk => !("error" in item));

describe("GeminiChunksToChatStream", () => {
  for (const name of FIXTURES) {
    it(`replays ${name} to the golden chunks`, async () => {
      const items = replay(eventsOf(name));
      expect(chunksOnly(items)).toHaveLength(items.length);
      expect(items.at(-1)).toMatchObject({ choices: [] });
      await expect(toGolden(items)).toMatchFileSnapshot(`./__fixtures__/${name}.chat-chunks.golden.json`);
    });
  }

  it("assembles to what the buffered translation gives for the same answer", () => {
    const events = eventsOf("stream-text-and-tools");
    const assembled = assembleChatStream(chunksOnly(replay(events))).choices[0]!;
    const merged: GeminiResponse = {
      ...events.at(-1)!,
      candidates: [{ ...events.at(-1)!.candidates![0]!, content: { parts: events.flatMap((e) => e.candidates![0]!.content!.parts!) } }],
    };
    const buffered = convertGeminiResponseToChat(merged, options).choices[0]!;
    expect(assembled.message.content).toBe(buffered.message.content);
    expect(assembled.message.reasoning_content).toBe("Thinking about cities.");
    expect(assembled.message.reasoning_content).toBe(buffered.message.reasoning_content);
    expect(assembled.message.tool_calls).toEqual(buffered.message.tool_calls);
    expect(assembled.finish_reason).toBe("tool_calls");
  });

  it("takes the last usage as final and MAX_TOKENS as length", () => {
    const chunks = chunksOnly(replay(eventsOf("stream-max-tokens")));
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe("length");
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 4, total_tokens: 12 });
  });

  it("reports the usage so far before the stream is finished (the gateway settles before the closing frames)", () => {
    const machine = new GeminiChunksToChatStream(options);
    expect(machine.reportedUsage()).toBeNull();
    for (const event of eventsOf("stream-text-and-tools")) machine.push(event);
    expect(machine.reportedUsage()).toMatchObject({ prompt_tokens: 1200, completion_tokens: 340, prompt_tokens_details: { cached_tokens: 1000 } });
  });

  it("turns an in-band error event into the Chat in-band error and stops", () => {
    const machine = new GeminiChunksToChatStream(options);
    machine.push(eventsOf("stream-max-tokens")[0]!);
    expect(machine.push({ error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } })).toEqual([
      { error: { message: "The model is overloaded.", type: "provider_error", param: null, code: "UNAVAILABLE" } },
    ]);
    expect(machine.finish()).toEqual([]);
  });
});
