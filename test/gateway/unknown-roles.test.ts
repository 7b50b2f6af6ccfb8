// Roles and content part types a format does not have are refused with 400 naming the field, before
// anything is held or forwarded: an OpenAI-compatible upstream may accept `role: "robot"`, and the
// request would be billed (issue 39, item 11).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { anthropicMessage, chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

describe.each(DATABASE_KINDS)("unknown roles and part types on %s", (kind) => {
  let openai: MockUpstream;
  let anthropic: MockUpstream;
  let gateway: TestGateway;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    openai = await startMockUpstream();
    openai.handler = (_req, res) => json(res, 200, chatCompletion("fine"));
    anthropic = await startMockUpstream();
    anthropic.handler = (_req, res) => json(res, 200, anthropicMessage("fine"));
    gateway = await startGateway(mockConfig({ openaiUrl: openai.url, anthropicUrl: anthropic.url }), { kind });
    const created = await gateway.createAccount();
    key = created.raw;
    accountId = created.account.id;
  });
  afterAll(async () => {
    await gateway?.close();
    await openai?.close();
    await anthropic?.close();
  });

  async function post(path: string, body: object) {
    const response = await fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      requestId: response.headers.get("x-request-id"),
      body: JSON.parse(text) as { error: { type: string; message: string; param?: string | null } },
    };
  }

  const refusals: Array<[string, string, object, string]> = [
    ["chat, role robot", "/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "robot", content: "Hi" }] }, "messages[0].role"],
    [
      "chat, a second message's role",
      "/v1/chat/completions",
      {
        model: "gpt-mock",
        messages: [
          { role: "user", content: "Hi" },
          { role: "Assistant", content: "Hello" },
        ],
      },
      "messages[1].role",
    ],
    ["chat, part type video", "/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "user", content: [{ type: "video", url: "x" }] }] }, "messages[0].content[0].type"],
    ["chat on an Anthropic upstream", "/v1/chat/completions", { model: "claude-mock", messages: [{ role: "robot", content: "Hi" }] }, "messages[0].role"],
    ["messages, role robot", "/v1/messages", { model: "claude-mock", max_tokens: 10, messages: [{ role: "robot", content: "Hi" }] }, "messages[0].role"],
    ["messages on a chat upstream", "/v1/messages", { model: "gpt-mock", max_tokens: 10, messages: [{ role: "tool", content: "Hi" }] }, "messages[0].role"],
  ];

  it.each(refusals)("%s: 400 invalid_request naming the field; nothing forwarded or charged", async (_name, path, body, param) => {
    const ledgerBefore = await gateway.app.ctx.store.ledger.count(accountId);
    const refused = await post(path, body);
    expect(refused.status).toBe(400);
    expect(refused.body.error.type).toBe("invalid_request");
    // Anthropic's error shape (/v1/messages) has no param: the message names the field.
    if (path === "/v1/chat/completions") expect(refused.body.error.param).toBe(param);
    expect(refused.body.error.message.startsWith(`${param}: `)).toBe(true);
    expect(refused.requestId).toBeTruthy();
    expect(openai.requests).toHaveLength(0);
    expect(anthropic.requests).toHaveLength(0);
    expect(await gateway.app.ctx.store.ledger.count(accountId)).toBe(ledgerBefore);
    expect((await gateway.app.ctx.store.accounts.get(accountId))!.totalSpent).toBe(0n);
  });

  it("serves every role and part type the formats have", async () => {
    const chat = await post("/v1/chat/completions", {
      model: "gpt-mock",
      messages: [
        { role: "system", content: "s" },
        { role: "developer", content: [{ type: "text", text: "d" }] },
        {
          role: "user",
          content: [
            { type: "text", text: "u" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
          ],
        },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: "r" },
      ],
    });
    expect(chat.status).toBe(200);
    const messages = await post("/v1/messages", { model: "claude-mock", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] });
    expect(messages.status).toBe(200);
  });
});
