// What the client sees, and what is charged, when the gateway itself fails after the upstream
// answered (issue 39, item 1's general guard):
// - a response header Node would refuse is caught before the charge: 500 internal_error in the
//   route's shape with X-Request-ID, nothing charged, buffered or streamed (safeHeaderValue is made
//   the identity here, so a client's CR/LF reaches the header as it did before that fix);
// - a failure while completing a stream (storing the Responses object) ends the stream with the
//   format's error event instead of its closing events; buffered, it is a 500 and nothing is charged.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const headerValue = vi.hoisted(() => ({ unsafe: false }));
vi.mock("../../src/core/header-value.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/core/header-value.js")>();
  return { ...original, safeHeaderValue: (text: string, max?: number) => (headerValue.unsafe ? text : original.safeHeaderValue(text, max)) };
});

describe.each(DATABASE_KINDS)("a failure in the gateway after the upstream answered, on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind });
    const created = await gateway.createAccount();
    key = created.raw;
    accountId = created.account.id;
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const ledgerRows = async () =>
    Number(
      (
        await gateway.app.ctx.store.db
          .selectFrom("ledger")
          .select((eb) => eb.fn.countAll().as("n"))
          .where("account_id", "=", accountId)
          .where("kind", "=", "usage")
          .executeTakeFirstOrThrow()
      ).n,
    );
  const heldNano = async () =>
    BigInt(
      (
        await gateway.app.ctx.store.db
          .selectFrom("holds")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );

  const answer = (stream: boolean) => {
    mock.handler = (req, res) =>
      stream ? chatStream(req, res, ["fine"], { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }) : json(res, 200, chatCompletion("fine"));
  };
  const post = (path: string, body: object) =>
    fetch(`${gateway.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });

  it.each([false, true])("an unsendable header is an uncharged 500 with X-Request-ID (stream: %s)", async (stream) => {
    answer(stream);
    const before = await ledgerRows();
    headerValue.unsafe = true;
    try {
      const response = await post("/v1/responses", { model: "gpt-mock", input: "hi", tools: [{ type: "a\r\nb" }], stream });
      expect(response.status).toBe(500);
      expect(response.headers.get("x-request-id")).toMatch(/^req_/);
      expect(response.headers.get("x-gateway-warnings")).toBeNull();
      const body = (await response.json()) as { error: { type: string } };
      expect(body.error.type).toBe("internal_error");
    } finally {
      headerValue.unsafe = false;
    }
    expect(await ledgerRows()).toBe(before);
    expect(await heldNano()).toBe(0n);
  });

  describe("storing the Responses object fails", () => {
    beforeAll(() => {
      vi.spyOn(gateway.app.ctx.store.responses, "save").mockRejectedValue(new Error("disk full"));
    });
    afterAll(() => {
      vi.restoreAllMocks();
    });

    it("buffered: 500 internal_error, nothing charged", async () => {
      answer(false);
      const before = await ledgerRows();
      const response = await post("/v1/responses", { model: "gpt-mock", input: "hi" });
      expect(response.status).toBe(500);
      expect(response.headers.get("x-request-id")).toMatch(/^req_/);
      expect(((await response.json()) as { error: { type: string } }).error.type).toBe("internal_error");
      expect(await ledgerRows()).toBe(before);
      expect(await heldNano()).toBe(0n);
    });

    it("streamed: the stream ends with the format's error event, not response.completed", async () => {
      answer(true);
      const response = await post("/v1/responses", { model: "gpt-mock", input: "hi", stream: true });
      expect(response.status).toBe(200);
      expect(response.headers.get("x-request-id")).toMatch(/^req_/);
      const text = await response.text();
      expect(text).toContain("response.output_text.delta");
      expect(text).not.toContain("response.completed");
      const last = text.trim().split("\n\n").at(-1)!;
      expect(last).toBe('event: error\ndata: {"type":"error","code":"internal_error","message":"Internal error.","param":null}');
      // The content reached the client: charged as any stream that fails after delivering.
      expect(await heldNano()).toBe(0n);
    });
  });

  it("any exception once a stream has started ends it with the format's error event", async () => {
    answer(true);
    const { billing, settlementRetries } = gateway.app.ctx.pipeline;
    vi.spyOn(billing, "settle").mockRejectedValue(new Error("ledger down"));
    vi.spyOn(settlementRetries, "schedule").mockImplementation(() => {
      throw new Error("retry queue full");
    });
    try {
      const response = await post("/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "user", content: "hi" }], stream: true });
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(text).toContain('"content":"fine"');
      expect(text.trim().split("\n\n").at(-1)).toBe('data: {"error":{"message":"Internal error.","type":"internal_error","param":null,"code":"internal_error"}}');
    } finally {
      vi.restoreAllMocks();
    }
  });
});
