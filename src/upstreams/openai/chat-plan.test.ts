import { describe, expect, it } from "vitest";
import type { ModelConfig } from "../../core/catalog.js";
import { chatToOpenAiChat, renameModelInChunkText } from "./chat-plan.js";

const MODEL = { id: "gw-model", upstreamModel: "up-model" } as ModelConfig;
const base = '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model-2024-08-06"';
const choices = ',"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}';

describe("renameModelInChunkText", () => {
  it("renames the model in place and leaves every other byte", () => {
    expect(renameModelInChunkText(`${base}${choices}`, '"gw-model"', false)).toBe(`${base.replace("up-model-2024-08-06", "gw-model")}${choices}`);
    expect(renameModelInChunkText('{"model" : "x", "choices": []}', '"gw"', false)).toBe('{"model":"gw", "choices": []}');
  });

  it('drops "usage":null for a client that did not ask for usage, keeps it for one that did', () => {
    const text = `${base},"usage":null${choices}`;
    const renamed = `${base.replace("up-model-2024-08-06", "gw-model")}`;
    expect(renameModelInChunkText(text, '"gw-model"', false)).toBe(`${renamed}${choices}`);
    expect(renameModelInChunkText(text, '"gw-model"', true)).toBe(`${renamed},"usage":null${choices}`);
    expect(renameModelInChunkText('{"usage":null,"model":"m","choices":[]}', '"g"', false)).toBe('{"model":"g","choices":[]}');
    expect(JSON.parse(renameModelInChunkText('{"model":"m","choices":[],"usage":null}', '"g"', false)!)).toEqual({ model: "g", choices: [] });
  });

  it.each([
    ["a usage object", `${base},"usage":{"prompt_tokens":1}${choices}`],
    ["an error", '{"error":{"message":"x"},"model":"m"}'],
    ["a backslash", `${base}${choices.replace("Hi", 'say \\"model\\"')}`],
    ["two model keys", `${base},"x":{"model":"y"}${choices}`],
    ["no model key", `{"id":"c1"${choices}`],
    ["a model key only inside a nested value", '{"id":"c1","choices":[{"index":0,"delta":{"model":"x"}}]}'],
    ["a model key after a nested value", '{"choices":[{"index":0,"delta":{"content":"a"}}],"model":"m"}'],
    ["a non-string model", '{"model":null,"choices":[]}'],
    ["text that is not an object", "[1,2]"],
  ])("leaves %s to the parsed path", (_name, text) => {
    expect(renameModelInChunkText(text, '"gw-model"', false)).toBeNull();
  });
});

describe("chat pass-through stream translator", () => {
  it("passes plain chunks as JSON text, parses the usage chunk, and estimates from passed text when usage is missing", () => {
    const plan = chatToOpenAiChat({ model: "gw-model", messages: [], stream: true }, MODEL);
    const translator = plan.streamTranslator();
    const [frame] = translator.push({ data: `${base}${choices}` });
    expect(frame).toMatchObject({ jsonText: true });
    expect(JSON.parse(String(frame!.data))).toMatchObject({ model: "gw-model", choices: [{ delta: { content: "Hi" } }] });
    expect(translator.deliveredText()).toBe("Hi");
    expect(translator.reportedUsage()).toBeNull();
    // The usage chunk the gateway asked for is parsed (and hidden from a client that did not ask).
    expect(translator.push({ data: `${base},"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}` })).toEqual([]);
    expect(translator.reportedUsage()).toMatchObject({ inputTokens: 3, outputTokens: 2 });
  });
});
