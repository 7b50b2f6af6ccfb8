import { describe, expect, it } from "vitest";
import { GatewayError } from "../../errors/catalogue.js";
import { readFixture, toGolden } from "../../wire/shared/read-fixture.test-kit.js";
import { convertChatRequestToGemini } from "./convert-chat-request-to-gemini.js";

const user = (content: unknown) => ({ role: "user", content });

function refusal(body: unknown): GatewayError {
  try {
    convertChatRequestToGemini(body);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error("expected a refusal");
}

describe("convertChatRequestToGemini", () => {
  it("translates a full request to the golden Gemini request", async () => {
    const { request, warnings } = convertChatRequestToGemini(readFixture(import.meta.url, "./__fixtures__/chat-request-tools-and-images.json"));
    await expect(toGolden(request)).toMatchFileSnapshot("./__fixtures__/chat-request-tools-and-images.gemini-request.golden.json");
    expect(warnings).toEqual([
      "tools[0].function.parameters: schema keyword $schema dropped (Gemini does not accept it)",
      "tools[0].function.parameters: schema keyword additionalProperties dropped (Gemini does not accept it)",
      "tools[0].function.parameters.properties.days.items: schema keyword exclusiveMinimum dropped (Gemini does not accept it)",
      "user: dropped (no Gemini equivalent)",
    ]);
  });

  it("sends system and developer text as the system instruction, and roles user/model", () => {
    const { request } = convertChatRequestToGemini(readFixture(import.meta.url, "./__fixtures__/chat-request-tools-and-images.json"));
    expect(request.systemInstruction).toEqual({ parts: [{ text: "You are terse.\n\nAnswer in English." }] });
    expect(request.contents.map((c) => c.role)).toEqual(["user", "model", "user"]);
  });

  it("answers tool messages under their call's function name, together in one user turn", () => {
    const { request } = convertChatRequestToGemini(readFixture(import.meta.url, "./__fixtures__/chat-request-tools-and-images.json"));
    expect(request.contents[2]!.parts).toEqual([
      { functionResponse: { name: "get_weather", response: { temperature_c: 4 } } },
      { functionResponse: { name: "get_time", response: { output: "12:00" } } },
      { text: "Thanks." },
    ]);
  });

  it("refuses a tool message that answers no earlier call, naming the field", () => {
    const error = refusal({ messages: [user("hi"), { role: "tool", tool_call_id: "call_x", content: "1" }] });
    expect(error.type).toBe("invalid_request");
    expect(error.details.param).toBe("messages[1].tool_call_id");
  });

  it("refuses http image URLs, naming the field", () => {
    const error = refusal({ messages: [user([{ type: "image_url", image_url: { url: "https://example.com/cat.png" } }])] });
    expect(error.details.param).toBe("messages[0].content[0].image_url.url");
    expect(error.status).toBe(400);
  });

  it.each([
    ["auto", { mode: "AUTO" }],
    ["required", { mode: "ANY" }],
    ["none", { mode: "NONE" }],
    [
      { type: "allowed_tools", allowed_tools: { mode: "required", tools: [{ type: "function", function: { name: "f" } }] } },
      { mode: "ANY", allowedFunctionNames: ["f"] },
    ],
  ])("maps tool_choice %j", (choice, config) => {
    const tools = [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "string" } } } } }];
    const { request } = convertChatRequestToGemini({ messages: [user("x")], tools, tool_choice: choice });
    expect(request.toolConfig).toEqual({ functionCallingConfig: config });
  });

  it("maps response_format json_schema to a stripped responseSchema", () => {
    const schema = { type: "object", additionalProperties: false, properties: { n: { type: ["integer", "null"] } }, required: ["n"] };
    const { request, warnings } = convertChatRequestToGemini({ messages: [user("x")], response_format: { type: "json_schema", json_schema: { name: "s", schema } } });
    expect(request.generationConfig).toEqual({
      responseMimeType: "application/json",
      responseSchema: { type: "object", properties: { n: { type: "integer", nullable: true } }, required: ["n"] },
    });
    expect(warnings).toEqual(["response_format.json_schema.schema: schema keyword additionalProperties dropped (Gemini does not accept it)"]);
  });

  it.each([
    ["minimal", 1024],
    ["low", 1024],
    ["medium", 8192],
    ["high", 24576],
    ["xhigh", 24576],
  ])("maps reasoning_effort %s to thinkingBudget %d and asks for the thought summaries", (effort, budget) => {
    expect(convertChatRequestToGemini({ messages: [user("x")], reasoning_effort: effort }).request.generationConfig).toEqual({
      thinkingConfig: { thinkingBudget: budget, includeThoughts: true },
    });
  });

  it("turns thinking off for reasoning_effort none, without asking for thoughts", () => {
    expect(convertChatRequestToGemini({ messages: [user("x")], reasoning_effort: "none" }).request.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
  });

  it("refuses what Gemini cannot take, naming the field", () => {
    expect(refusal({ messages: [user("x")], n: 2 }).details.param).toBe("n");
    expect(refusal({ messages: [user("x")], stop: ["a", "b", "c", "d", "e", "f"] }).details.param).toBe("stop");
    expect(refusal({ messages: [user("x")], reasoning_effort: "huge" }).details.param).toBe("reasoning_effort");
    expect(refusal({ messages: [{ role: "assistant", tool_calls: [{ id: "c", function: { name: "f", arguments: "[1]" } }] }] }).details.param).toBe(
      "messages[0].tool_calls[0].function.arguments",
    );
  });
});
