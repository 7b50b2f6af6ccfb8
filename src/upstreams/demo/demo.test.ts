// The demo upstream alone: deterministic answers derived from the prompt, a tool call when tools
// are offered (a shell tool's command is an echo), the end of the loop after a tool result, the
// output limit, and the transport answering as the HTTP client would (buffered and SSE).
import { describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../core/catalog.js";
import { Cancellation } from "../../core/cancellation.js";
import { sseDecoder } from "../sse-decoder.js";
import { demoAnswer } from "./answer.js";
import { demoTransport } from "./transport.js";

const provider = { name: "demo", type: "demo", baseUrl: "http://demo.invalid" } as ProviderConfig;
const user = (content: unknown) => ({ role: "user", content });
const shell = {
  type: "function",
  function: { name: "exec_command", parameters: { type: "object", properties: { cmd: { type: "string" }, workdir: { type: "string" } }, required: ["cmd"] } },
};
const read = {
  type: "function",
  function: { name: "Read", parameters: { type: "object", properties: { file_path: { type: "string" }, limit: { type: "integer" } }, required: ["file_path", "limit"] } },
};

describe("demoAnswer", () => {
  it("answers text derived from the prompt, the same every time, saying it is a demo", () => {
    const body = { model: "demo-chat", messages: [{ role: "system", content: "Be brief." }, user([{ type: "text", text: "What is   the\nweather?" }])] };
    const answer = demoAnswer(body);
    expect(answer).toEqual(demoAnswer(structuredClone(body)));
    expect(answer.kind).toBe("text");
    if (answer.kind !== "text") return;
    expect(answer.text).toContain("demo-chat, the built-in demo of Model Gateway, not a real model");
    expect(answer.text).toContain('had 4 words and began "What is the weather?"');
    expect(answer.finishReason).toBe("stop");
    expect(answer.usage.completion_tokens).toBe(Math.ceil(answer.text.length / 4));
    expect(answer.usage.total_tokens).toBe(answer.usage.prompt_tokens + answer.usage.completion_tokens);
    expect(demoAnswer({ ...body, messages: [user("something else")] })).not.toEqual(answer);
  });

  it("calls a shell tool with an echo when one is offered, else the first tool with its required arguments", () => {
    const withShell = demoAnswer({ model: "demo-chat", messages: [user("hi")], tools: [read, shell] });
    expect(withShell).toMatchObject({ kind: "tool", name: "exec_command", arguments: JSON.stringify({ cmd: "echo hello from the demo model" }) });
    const readOnly = demoAnswer({ model: "demo-chat", messages: [user("hi")], tools: [read] });
    expect(readOnly).toMatchObject({ kind: "tool", name: "Read", arguments: JSON.stringify({ file_path: "demo", limit: 1 }) });
    expect(demoAnswer({ model: "demo-chat", messages: [user("hi")], tools: [shell], tool_choice: "none" }).kind).toBe("text");
  });

  it("after a tool result (even with a user message after it) answers text about the result", () => {
    const call = { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "exec_command", arguments: "{}" } }] };
    const result = { role: "tool", tool_call_id: "call_1", content: "hello from the demo model\n" };
    for (const messages of [
      [user("hi"), call, result],
      [user("hi"), call, result, user("<system-reminder>noted</system-reminder>")],
    ]) {
      const answer = demoAnswer({ model: "demo-chat", messages, tools: [shell] });
      expect(answer.kind).toBe("text");
      if (answer.kind === "text") expect(answer.text).toContain('26 characters, beginning "hello from the demo model"');
    }
  });

  it("stops at max_tokens with finish_reason length", () => {
    const answer = demoAnswer({ model: "demo-chat", messages: [user("hi")], max_tokens: 5 });
    expect(answer).toMatchObject({ kind: "text", finishReason: "length", usage: { completion_tokens: 5 } });
    if (answer.kind === "text") expect(answer.text).toHaveLength(20);
  });
});

describe("demoTransport", () => {
  const request = (body: unknown, path = "/chat/completions") => ({ url: `http://demo.invalid${path}`, method: "POST" as const, headers: {}, body: JSON.stringify(body) });

  it("answers a buffered Chat completion as JSON", async () => {
    const response = await demoTransport(provider, request({ model: "demo-fast", messages: [user("hi")] }), new Cancellation());
    expect(response.status).toBe(200);
    const json = JSON.parse(await response.body.text()) as { object: string; choices: Array<{ message: { content: string } }>; usage: { prompt_tokens: number } };
    expect(json.object).toBe("chat.completion");
    expect(json.choices[0]!.message.content).toContain("demo-fast");
    expect(json.usage.prompt_tokens).toBeGreaterThan(0);
  });

  it("streams SSE chunks that add up to the buffered answer, then usage and [DONE]", async () => {
    const body = { model: "demo-fast", messages: [user("hi")], stream: true, stream_options: { include_usage: true } };
    const response = await demoTransport(provider, request(body), new Cancellation());
    expect(response.headers["content-type"]).toBe("text/event-stream");
    const decoder = sseDecoder();
    const events = [...decoder.push(Buffer.from(await response.body.text())), ...decoder.end()];
    expect(events.at(-1)!.data).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data) as { choices: Array<{ delta: { content?: string } }>; usage?: unknown });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    const answer = demoAnswer(body);
    expect(answer.kind === "text" && text === answer.text).toBe(true);
    expect(chunks.at(-1)!.usage).toEqual(answer.usage);
  });

  it("ends a paced stream when the request is cancelled", async () => {
    const cancellation = new Cancellation();
    const response = await demoTransport(provider, request({ model: "demo-chat", messages: [user("hi")], stream: true }), cancellation);
    cancellation.abort();
    expect(response.body.destroyed).toBe(true);
    await expect(demoTransport(provider, request({ model: "demo-chat", messages: [] }), cancellation)).rejects.toThrow(/went away/);
  });

  it("has no other path, and refuses a body that is not a JSON object", async () => {
    expect((await demoTransport(provider, request({}, "/responses"), new Cancellation())).status).toBe(404);
    const bad = await demoTransport(provider, { ...request({}), body: "[1]" }, new Cancellation());
    expect(bad.status).toBe(400);
  });
});
