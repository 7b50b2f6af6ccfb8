// Guardrails and the books, on SQLite and PostgreSQL: a blocked request sends nothing and charges
// nothing (no ledger row, the hold released), a masked one is charged for what was sent, a blocked
// answer is charged what the upstream billed (billing.charge_blocked_answers, default true) or not
// at all; the external moderator blocking, masking, timing out (fail closed, fail open); each
// decision in the request log and in metrics, never the text; embeddings input masked.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { chatCompletion, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { DATABASE_KINDS } from "../support/databases.js";

type Moderator = (body: { guardrail: string; side: string; texts: string[] }, res: ServerResponse) => void | Promise<void>;

async function startModerator(): Promise<{
  url: string;
  calls: Array<{ guardrail: string; side: string; texts: string[]; secret: string }>;
  handler: Moderator;
  close(): Promise<void>;
}> {
  const state = {
    url: "",
    calls: [] as Array<{ guardrail: string; side: string; texts: string[]; secret: string }>,
    handler: ((_b, res) => json(res, 200, { verdict: "pass" })) as Moderator,
    close: (): Promise<void> => Promise.resolve(),
  };
  const server: Server = createServer((req: IncomingMessage, res) => {
    let text = "";
    req.on("data", (c: Buffer) => (text += c.toString("utf8")));
    req.on("end", () => {
      const body = JSON.parse(text) as { guardrail: string; side: string; texts: string[] };
      state.calls.push({ ...body, secret: String(req.headers["x-moderator-secret"] ?? "") });
      void Promise.resolve(state.handler(body, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve())));
  return state;
}

const EMAIL = "jane.doe@example.com";

describe.each(DATABASE_KINDS)("guardrails and billing (%s)", (kind) => {
  let mock: MockUpstream;
  let moderator: Awaited<ReturnType<typeof startModerator>>;
  let gateway: TestGateway;
  let openGateway: TestGateway;
  let accountId: string;
  let key: string;
  let openKey: string;

  const chat = (url: string, apiKey: string, content: string) =>
    fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content }] }),
    });
  const ledgerRows = () => gateway.app.ctx.store.ledger.count(accountId);
  const logged = async (requestId: string) => {
    await gateway.app.ctx.pipeline.requestLog!.flush();
    const rows = await gateway.app.ctx.store.db.selectFrom("request_log").selectAll().where("request_id", "=", requestId).execute();
    return rows[0]!;
  };

  beforeAll(async () => {
    mock = await startMockUpstream();
    moderator = await startModerator();
    const guardrails = (onFailure: string) => `
  - id: embed-mock
    kind: embedding
    provider: mockai
    pricing: { input_per_mtok: "0.10" }
guardrails:
  - name: pii
    kind: builtin
    patterns: [email]
    applies_to: [request]
    mode: mask
  - name: codes
    kind: regex
    patterns: [{ name: project, pattern: "PROJECT-[0-9]{4}" }]
    applies_to: [request, response]
    mode: block
  - name: moderator
    kind: webhook
    webhook: { url: "${moderator.url}/check", timeout_ms: 300, headers: { x-moderator-secret: "s3cret" } }
    applies_to: [request, response]
    mode: block
    on_failure: ${onFailure}
metrics:
  token_env: GW_GUARDRAIL_METRICS
`;
    const env = { GW_GUARDRAIL_METRICS: "metrics-token-123" };
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: guardrails("closed") }), { kind, env });
    openGateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: `${guardrails("open")}\nbilling: { charge_blocked_answers: false }\n` }), { kind, env });
    const created = await gateway.createAccount({ balance: "10", tier: "premium" });
    accountId = created.account.id;
    key = created.raw;
    openKey = (await openGateway.createAccount({ balance: "10" })).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await openGateway?.close();
    await moderator?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
    moderator.calls.length = 0;
    moderator.handler = (_b, res) => json(res, 200, { verdict: "pass" });
    mock.handler = (_req, res) => json(res, 200, chatCompletion("Fine.", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
  });

  it("a blocked request: 400 naming the guardrail, nothing sent, no ledger row, the hold released, logged", async () => {
    const before = await ledgerRows();
    const response = await chat(gateway.url, key, "Status of PROJECT-1234?");
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: "guardrail_blocked", code: "guardrail_blocked", message: 'The request was blocked by guardrail "codes".' });
    expect(mock.requests).toHaveLength(0);
    expect(moderator.calls).toHaveLength(0);
    expect(await ledgerRows()).toBe(before);
    expect(await gateway.app.ctx.store.db.selectFrom("holds").select("id").where("account_id", "=", accountId).execute()).toHaveLength(0);
    const row = await logged(response.headers.get("x-request-id")!);
    expect(row.guardrails).toBe("request:pii:pass,request:codes:block");
    expect(row.error_type).toBe("guardrail_blocked");
    expect(JSON.stringify(row, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain("PROJECT-1234");
  });

  it("a masked request is sent masked, asked of the moderator masked, and charged once", async () => {
    const before = await ledgerRows();
    const response = await chat(gateway.url, key, `Write to ${EMAIL}`);
    expect(response.status).toBe(200);
    expect(mock.requests[0]!.body.messages[0].content).toBe("Write to [REDACTED:email]");
    expect(moderator.calls.map((c) => [c.side, c.texts, c.secret])).toEqual([
      ["request", ["Write to [REDACTED:email]"], "s3cret"],
      ["response", ["Fine."], "s3cret"],
    ]);
    expect(await ledgerRows()).toBe(before + 1);
    const row = await logged(response.headers.get("x-request-id")!);
    expect(row.guardrails).toBe("request:pii:mask,request:codes:pass,request:moderator:pass,response:codes:pass,response:moderator:pass");
    expect(JSON.stringify(row, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain(EMAIL);
  });

  it("the moderator blocks: 400, nothing sent or charged", async () => {
    moderator.handler = (_b, res) => json(res, 200, { verdict: "block" });
    const before = await ledgerRows();
    const response = await chat(gateway.url, key, "Something the moderator dislikes");
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toBe('The request was blocked by guardrail "moderator".');
    expect(mock.requests).toHaveLength(0);
    expect(await ledgerRows()).toBe(before);
  });

  it("the moderator masks, by replaced texts or by spans", async () => {
    moderator.handler = (b, res) => json(res, 200, b.side === "request" ? { verdict: "mask", texts: ["[withheld]"] } : { verdict: "pass" });
    expect((await chat(gateway.url, key, "a secret plan")).status).toBe(200);
    expect(mock.requests[0]!.body.messages[0].content).toBe("[withheld]");
    moderator.handler = (b, res) => json(res, 200, b.side === "response" ? { verdict: "mask", spans: [{ text: 0, start: 0, end: 4, label: "word" }] } : { verdict: "pass" });
    const response = await chat(gateway.url, key, "hello");
    expect(((await response.json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content).toBe("[REDACTED:word].");
  });

  it("a moderator that times out: fail closed blocks (guardrail_unavailable), fail open passes", async () => {
    moderator.handler = async (_b, res) => {
      await sleep(1_000);
      if (!res.destroyed) json(res, 200, { verdict: "pass" });
    };
    const before = await ledgerRows();
    const closed = await chat(gateway.url, key, "hello");
    expect(closed.status).toBe(400);
    expect(((await closed.json()) as { error: { code: string } }).error.code).toBe("guardrail_unavailable");
    expect(mock.requests).toHaveLength(0);
    expect(await ledgerRows()).toBe(before);
    const open = await chat(openGateway.url, openKey, "hello");
    expect(open.status).toBe(200);
    expect(mock.requests).toHaveLength(1);
  });

  it("a blocked answer is charged what the upstream billed by default, nothing with charge_blocked_answers: false", async () => {
    mock.handler = (_req, res) => json(res, 200, chatCompletion("See PROJECT-9999.", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }));
    const before = await ledgerRows();
    const charged = await chat(gateway.url, key, "hello");
    expect(charged.status).toBe(400);
    expect(((await charged.json()) as { error: { message: string } }).error.message).toBe('The answer was blocked by guardrail "codes".');
    expect(await ledgerRows()).toBe(before + 1);
    const openAccount = (await openGateway.app.ctx.store.db.selectFrom("ledger").select("id").execute()).length;
    const free = await chat(openGateway.url, openKey, "hello");
    expect(free.status).toBe(400);
    expect((await openGateway.app.ctx.store.db.selectFrom("ledger").select("id").execute()).length).toBe(openAccount);
  });

  it("counts every decision in metrics by guardrail, side and action", async () => {
    await chat(gateway.url, key, `mail ${EMAIL}`);
    const text = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: "Bearer metrics-token-123" } })).text();
    expect(text).toMatch(/gateway_guardrail_decisions_total\{guardrail="pii",side="request",action="mask"\} [1-9]/);
    expect(text).toMatch(/gateway_guardrail_decisions_total\{guardrail="codes",side="request",action="block"\} [1-9]/);
    expect(text).not.toContain(EMAIL);
  });

  it("masks the texts of an embeddings request", async () => {
    mock.handler = (_req, res) =>
      json(res, 200, { object: "list", data: [{ object: "embedding", index: 0, embedding: [0.1] }], model: "e", usage: { prompt_tokens: 3, total_tokens: 3 } });
    const response = await fetch(`${gateway.url}/v1/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "embed-mock", input: [`to ${EMAIL}`, "plain"] }),
    });
    expect(response.status).toBe(200);
    expect(mock.requests[0]!.body.input).toEqual(["to [REDACTED:email]", "plain"]);
  });
});
