// GET /v1/requests/{request_id}: one request's ledger row, for the key's own account only.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatUsd } from "../../src/core/money.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { anthropicMessage, chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

for (const kind of DATABASE_KINDS) {
  describe(`GET /v1/requests/{request_id} (${kind})`, () => {
    let mock: MockUpstream;
    let gateway: TestGateway;
    let owner: { raw: string; accountId: string };
    let otherKeyOfOwner: string;
    let stranger: string;

    beforeAll(async () => {
      mock = await startMockUpstream();
      mock.handler = (req, res) =>
        req.url.startsWith("/v1/messages")
          ? json(res, 200, anthropicMessage("hi", { usage: { input_tokens: 100, output_tokens: 7, cache_read_input_tokens: 40, cache_creation_input_tokens: 0 } }))
          : json(
              res,
              200,
              chatCompletion("hi", { usage: { prompt_tokens: 1200, completion_tokens: 300, total_tokens: 1500, completion_tokens_details: { reasoning_tokens: 120 } } }),
            );
      gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind });
      const created = await gateway.createAccount({ balance: "10" });
      owner = { raw: created.raw, accountId: created.account.id };
      otherKeyOfOwner = (await gateway.app.ctx.store.keys.create({ accountId: created.account.id })).raw;
      stranger = (await gateway.createAccount({ balance: "10" })).raw;
    });
    afterAll(async () => {
      await gateway?.close();
      await mock?.close();
    });

    async function chat(raw: string, model = "gpt-mock") {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model, messages: [{ role: "user", content: "hello" }] }),
      });
      expect(response.status).toBe(200);
      return { id: response.headers.get("x-request-id")!, cost: response.headers.get("x-gateway-cost-usd")! };
    }

    async function lookup(raw: string, id: string) {
      const response = await fetch(`${gateway.url}/v1/requests/${id}`, { headers: { authorization: `Bearer ${raw}` } });
      return { status: response.status, body: (await response.json()) as Record<string, any> };
    }

    it("returns the request's ledger row: model, tokens, cost as the header and the row say, flags, time", async () => {
      const before = Date.now();
      const { id, cost } = await chat(owner.raw);
      const { status, body } = await lookup(owner.raw, id);
      expect(status).toBe(200);
      const [row] = await gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("request_id", "=", id).execute();
      // 1200 x 1.00/M + 300 x 2.00/M = 0.0012 + 0.0006
      expect(cost).toBe("0.0018");
      expect(body).toEqual({
        object: "request",
        id,
        created_at: new Date(Number(row!.created_at)).toISOString(),
        model: "gpt-mock",
        route: "chat",
        deployment: null,
        input_tokens: 1200,
        cached_tokens: 0,
        output_tokens: 300,
        reasoning_tokens: 120,
        cost_usd: formatUsd(row!.cost_nano),
        estimated: false,
        attempts: 1,
        price_factor: null,
        dimensions: {
          input: { tokens: 1200, cost_usd: "0.0012" },
          cached_input: { tokens: 0, cost_usd: "0.00" },
          cache_write_5m: { tokens: 0, cost_usd: "0.00" },
          cache_write_1h: { tokens: 0, cost_usd: "0.00" },
          output: { tokens: 300, cost_usd: "0.0006" },
          web_search: { calls: 0, cost_usd: "0.00" },
          request: { requests: 1, cost_usd: "0.00" },
          image: { images: 0, cost_usd: "0.00" },
          video_second: { seconds: 0, cost_usd: "0.00" },
        },
        cache: { read_tokens: 0, read_cost_usd: "0.00", write_tokens: 0, write_cost_usd: "0.00", hit_ratio: "0.000000", saving_usd: "0.00" },
      });
      expect(body.cost_usd).toBe(cost);
      expect(Date.parse(body.created_at as string)).toBeGreaterThanOrEqual(before - 1000);
      expect(JSON.stringify(body)).not.toContain("mockai"); // the provider's name is not shown
    });

    it("counts cached tokens (Messages on an Anthropic upstream) and shows the route", async () => {
      const response = await fetch(`${gateway.url}/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": owner.raw, "content-type": "application/json", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model: "claude-mock", max_tokens: 50, messages: [{ role: "user", content: "hello" }] }),
      });
      expect(response.status).toBe(200);
      const id = response.headers.get("x-request-id")!;
      const { body } = await lookup(owner.raw, id);
      expect(body).toMatchObject({
        model: "claude-mock",
        route: "messages",
        input_tokens: 140,
        cached_tokens: 40,
        output_tokens: 7,
        cost_usd: response.headers.get("x-gateway-cost-usd"),
      });
    });

    it("marks an estimated charge (a stream whose upstream reported no usage)", async () => {
      const previous = mock.handler;
      mock.handler = (req, res) => chatStream({ ...req, body: { ...req.body, stream_options: undefined } }, res, ["Hello", " there"]);
      try {
        const response = await fetch(`${gateway.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${owner.raw}`, "content-type": "application/json" },
          body: JSON.stringify({ model: "gpt-mock", stream: true, messages: [{ role: "user", content: "hello" }] }),
        });
        expect(response.status).toBe(200);
        await response.text();
        const id = response.headers.get("x-request-id")!;
        const { body } = await lookup(owner.raw, id);
        const [row] = await gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("request_id", "=", id).execute();
        expect(row!.estimated).toBe(1n);
        expect(body).toMatchObject({ id, estimated: true, output_tokens: Number(row!.output_tokens), cost_usd: formatUsd(row!.cost_nano) });
        expect(body.output_tokens).toBeGreaterThan(0);
      } finally {
        mock.handler = previous;
      }
    });

    it("answers every key of the same account", async () => {
      const { id } = await chat(owner.raw);
      expect((await lookup(otherKeyOfOwner, id)).body).toMatchObject({ id, model: "gpt-mock" });
    });

    it("answers another account's request exactly like an unknown one: 404 not_found", async () => {
      const { id } = await chat(owner.raw);
      const foreign = await lookup(stranger, id);
      const unknownId = `req_${"0".repeat(32)}`;
      const unknown = await lookup(stranger, unknownId);
      expect(foreign.status).toBe(404);
      expect(unknown.status).toBe(404);
      expect(foreign.body.error).toMatchObject({ type: "not_found", param: "request_id" });
      // The same error but for the id it names.
      expect(JSON.stringify(foreign.body.error).replace(id, "ID")).toBe(JSON.stringify(unknown.body.error).replace(unknownId, "ID"));
    });

    it("does not show a credit row, even the account's own", async () => {
      await gateway.app.ctx.store.accounts.adjustBalance(owner.accountId, 5n, "test credit");
      const [credit] = await gateway.app.ctx.store.db.selectFrom("ledger").select("request_id").where("account_id", "=", owner.accountId).where("kind", "=", "credit").execute();
      expect(credit!.request_id).toMatch(/^credit_/);
      expect((await lookup(owner.raw, credit!.request_id)).status).toBe(404);
    });

    it.each([
      ["too long", "r".repeat(101)],
      ["far too long", "r".repeat(4000)],
      ["empty", ""],
      ["two segments", "req_a/req_b"],
      ["a character outside the set", "req_abc.def"],
      ["an encoded quote", "req_%22x"],
      ["a space", "req%20x"],
    ])("refuses an id that is %s with 400 invalid_request naming request_id", async (_name, id) => {
      const { status, body } = await lookup(owner.raw, id);
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ type: "invalid_request", param: "request_id" });
    });

    it("needs an API key", async () => {
      const response = await fetch(`${gateway.url}/v1/requests/req_x`);
      expect(response.status).toBe(401);
    });
  });
}
