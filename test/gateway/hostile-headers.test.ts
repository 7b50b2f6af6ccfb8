// A client's string that the gateway echoes in a header (a dropped tool's type in
// x-gateway-warnings) is made safe: printable ASCII, percent-encoded, bounded. Before, CR/LF in it
// made Node refuse the header after the request was billed: a 500 in Fastify's shape, no
// X-Request-ID, a charge in the ledger, and with stream: true no response at all (issue 39, item 1).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const HOSTILE_TOOLS = [{ type: "a\r\nb" }, { type: "café\u0000" }, { type: `x${"y".repeat(5000)}` }];

describe.each(DATABASE_KINDS)("client strings echoed in headers, on %s", (kind) => {
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

  const usageRows = async () =>
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

  function expectSafeWarnings(response: Response) {
    const warnings = response.headers.get("x-gateway-warnings")!;
    expect(warnings).toMatch(/^[\x20-\x7e]+$/);
    expect(warnings.length).toBeLessThanOrEqual(2000);
    expect(warnings).toContain("tools[0] (a%0D%0Ab): dropped");
    expect(warnings).toContain("caf%C3%A9%00");
  }

  it.each([false, true])("serves the request with a safe x-gateway-warnings and bills it once (stream: %s)", async (stream) => {
    mock.handler = (req, res) =>
      stream ? chatStream(req, res, ["fine"], { usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } }) : json(res, 200, chatCompletion("fine"));
    const before = await usageRows();
    const response = await fetch(`${gateway.url}/v1/responses`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", input: "hi", tools: HOSTILE_TOOLS, stream }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    expectSafeWarnings(response);
    const text = await response.text();
    expect(text).toContain(stream ? "response.completed" : '"status":"completed"');
    expect(await usageRows()).toBe(before + 1);
  });
});
