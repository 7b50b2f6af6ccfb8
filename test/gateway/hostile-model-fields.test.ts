// Hostile strings on the model routes (issue 39, item 3): an identifier the gateway looks up or
// records (the model, previous_response_id, a path id, a query value) holding a NUL, CR/LF, another
// control character or an unpaired surrogate is refused with 400 invalid_request naming the field
// and X-Request-ID, the same on SQLite and PostgreSQL (where a NUL in a lookup was a 500), before
// anything is held. A prompt is forwarded text, never a stored column: a NUL in it is served.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const REFUSED: ReadonlyArray<[string, string]> = [
  ["a NUL", "a\u0000b"],
  ["CR/LF", "a\r\nb"],
  ["an escape", "a\u001bb"],
  ["an unpaired surrogate", "a\ud800b"],
];

const MODEL_ROUTES: ReadonlyArray<[string, (model: string) => object]> = [
  ["/v1/chat/completions", (model) => ({ model, messages: [{ role: "user", content: "hi" }] })],
  ["/v1/messages", (model) => ({ model, max_tokens: 16, messages: [{ role: "user", content: "hi" }] })],
  ["/v1/messages/count_tokens", (model) => ({ model, messages: [{ role: "user", content: "hi" }] })],
  ["/v1/responses", (model) => ({ model, input: "hi" })],
  ["/v1/embeddings", (model) => ({ model, input: "hi" })],
  ["/v1/images/generations", (model) => ({ model, prompt: "a cat" })],
  ["/v1/videos", (model) => ({ model, prompt: "a cat" })],
];

describe.each(DATABASE_KINDS)("hostile identifiers on the model routes, on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("fine"));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind });
    const created = await gateway.createAccount();
    key = created.raw;
    accountId = created.account.id;
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const headers = () => ({ authorization: `Bearer ${key}`, "content-type": "application/json" });
  const post = (path: string, body: object) => fetch(`${gateway.url}${path}`, { method: "POST", headers: headers(), body: JSON.stringify(body) });
  const ledgerRows = async () =>
    Number(
      (
        await gateway.app.ctx.store.db
          .selectFrom("ledger")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("account_id", "=", accountId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const holds = async () =>
    Number(
      (
        await gateway.app.ctx.store.db
          .selectFrom("holds")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  async function expectRefused(response: Response, field: string) {
    expect(response.status).toBe(400);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    const text = await response.text();
    expect(text).toContain('"invalid_request"');
    expect(text).toContain(`${field}: must not contain`);
  }

  it.each(REFUSED)("a model id with %s is 400 naming model on every model route, nothing held", async (_name, hostile) => {
    const before = await ledgerRows();
    for (const [path, body] of MODEL_ROUTES) await expectRefused(await post(path, body(`gpt${hostile}`)), "model");
    expect(await ledgerRows()).toBe(before);
    expect(await holds()).toBe(0);
    expect(mock.requests.length).toBe(0);
  });

  it.each(REFUSED)("previous_response_id, a path id and a query value with %s are 400 naming the field", async (_name, hostile) => {
    await expectRefused(await post("/v1/responses", { model: "gpt-mock", input: "hi", previous_response_id: `resp_${hostile}` }), "previous_response_id");
    const encoded = encodeURIComponent(hostile.replace(/[\ud800-\udfff]/, "\u0000"));
    await expectRefused(await fetch(`${gateway.url}/v1/responses/resp_${encoded}`, { headers: headers() }), "id");
    await expectRefused(await fetch(`${gateway.url}/v1/videos/task_${encoded}?model=x`, { headers: headers() }), "id");
    await expectRefused(await fetch(`${gateway.url}/v1/usage?model=m${encoded}`, { headers: headers() }), "model");
  });

  it("a right-to-left mark in a model id is an ordinary unknown model, not a 500", async () => {
    const response = await post("/v1/chat/completions", { model: "gpt\u200f-mock", messages: [{ role: "user", content: "hi" }] });
    expect(response.status).toBe(404);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
  });

  it("a NUL inside a prompt is forwarded and billed once", async () => {
    const before = await ledgerRows();
    const response = await post("/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "user", content: "a\u0000b\ud800" }] });
    expect(response.status).toBe(200);
    expect(await ledgerRows()).toBe(before + 1);
  });
});
