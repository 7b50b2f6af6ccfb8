// Every number that reaches admission or settlement stays in range (issue 19, defect 5): output-token
// limits above the model's are refused with 400 naming the field, on all three chat routes, before
// anything is held or sent upstream; an upstream reporting impossible usage is billed the gateway's
// estimate instead. On SQLite and PostgreSQL: 1e30 tokens used to overflow the database's bigint.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { MAX_OUTPUT_TOKENS_CEILING } from "../../src/core/usage.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const HUGE = [1e30, 2 ** 63, 4097]; // gpt-mock's max_output_tokens is 4096

const ROUTES = [
  { path: "/v1/chat/completions", field: "max_tokens", body: { messages: [{ role: "user", content: "Hi" }] } },
  { path: "/v1/chat/completions", field: "max_completion_tokens", body: { messages: [{ role: "user", content: "Hi" }] } },
  { path: "/v1/messages", field: "max_tokens", body: { messages: [{ role: "user", content: "Hi" }] } },
  { path: "/v1/responses", field: "max_output_tokens", body: { input: "Hi" } },
] as const;

for (const kind of DATABASE_KINDS) {
  describe(`number bounds on ${kind}`, () => {
    let mock: MockUpstream;
    let gateway: TestGateway;

    beforeAll(async () => {
      mock = await startMockUpstream();
      gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind });
    });
    afterAll(async () => {
      await gateway?.close();
      await mock?.close();
    });
    beforeEach(() => {
      mock.requests.length = 0;
      mock.handler = (_req, res) => json(res, 200, chatCompletion("ok"));
    });

    async function post(raw: string, path: string, body: object) {
      const response = await fetch(`${gateway.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      return { status: response.status, requestId: response.headers.get("x-request-id"), text: await response.text() };
    }

    const usageRows = (accountId: string) => gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).where("kind", "=", "usage").execute();

    it("refuses an output-token limit above the model's with 400 naming the field, nothing held, sent or charged", async () => {
      const { raw, account } = await gateway.createAccount({ balance: "10" });
      for (const route of ROUTES) {
        for (const value of HUGE) {
          const result = await post(raw, route.path, { model: "gpt-mock", ...route.body, [route.field]: value });
          expect(result.status, `${route.path} ${route.field}=${value}: ${result.text}`).toBe(400);
          const body = JSON.parse(result.text);
          expect(body.request_id).toBe(result.requestId);
          if (route.path === "/v1/messages") expect(body.error).toMatchObject({ type: "invalid_request", message: expect.stringContaining(route.field) });
          else expect(body.error).toMatchObject({ type: "invalid_request", param: route.field, message: expect.stringContaining("4096") });
        }
      }
      expect(mock.requests).toHaveLength(0);
      const after = await gateway.app.ctx.store.accounts.get(account.id);
      expect(after).toMatchObject({ balance: account.balance, held: 0n, totalSpent: 0n });
      expect(await usageRows(account.id)).toHaveLength(0);
    });

    it("accepts the model's own limit, and bounds a model without one by the global ceiling", async () => {
      const { raw } = await gateway.createAccount({ balance: "100", tier: "premium" });
      expect((await post(raw, "/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 4096 })).status).toBe(200);
      const over = await post(raw, "/v1/chat/completions", { model: "premium-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: MAX_OUTPUT_TOKENS_CEILING + 1 });
      expect(over.status).toBe(400);
      expect(JSON.parse(over.text).error).toMatchObject({ type: "invalid_request", param: "max_tokens" });
      expect((await post(raw, "/v1/chat/completions", { model: "premium-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: MAX_OUTPUT_TOKENS_CEILING })).status).toBe(
        200,
      );
    });

    it("bills its estimate when the upstream reports impossible usage (1e30, 2^63, negative), buffered and streamed", async () => {
      const { raw, account } = await gateway.createAccount({ balance: "10" });
      const reports = [
        { prompt_tokens: 1e30, completion_tokens: 5, total_tokens: 1e30 },
        { prompt_tokens: 10, completion_tokens: 2 ** 63, total_tokens: 2 ** 63 },
        { prompt_tokens: 10, completion_tokens: -5, total_tokens: 5 },
        { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: -1e30 } },
      ];
      for (const usage of reports) {
        mock.handler = (_req, res) => json(res, 200, chatCompletion("ok", { usage }));
        const buffered = await post(raw, "/v1/chat/completions", { model: "gpt-mock", messages: [{ role: "user", content: "Hi" }] });
        expect(buffered.status, buffered.text).toBe(200);
        mock.handler = (req, res) => chatStream(req, res, ["o", "k"], { usage });
        const streamed = await post(raw, "/v1/chat/completions", {
          model: "gpt-mock",
          messages: [{ role: "user", content: "Hi" }],
          stream: true,
          stream_options: { include_usage: true },
        });
        expect(streamed.status).toBe(200);
        expect(streamed.text).toContain("[DONE]");
      }
      const rows = await usageRows(account.id);
      expect(rows).toHaveLength(reports.length * 2);
      for (const row of rows) {
        expect(Number(row.estimated)).toBe(1);
        expect(Number(row.input_tokens)).toBeLessThan(100);
        expect(Number(row.output_tokens)).toBeLessThan(100);
        expect(Number(row.cached_tokens)).toBe(0);
      }
      const after = await gateway.app.ctx.store.accounts.get(account.id);
      expect(after!.held).toBe(0n);
      expect(after!.totalSpent).toBe(rows.reduce((sum, r) => sum + BigInt(r.cost_nano), 0n));
    });
  });
}
