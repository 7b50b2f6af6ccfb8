// The provider's connection pool through the gateway, on both databases: with max_connections 2 and
// an upstream that holds its answers, a third concurrent request waits (gateway_upstream_requests_waiting
// shows 1) and is sent once a connection frees; with the wait longer than connection_wait_ms it fails
// with provider_error (code upstream_connection_wait_timeout), never reaches the upstream, and costs
// nothing (no ledger row, no hold left, the balance down by the two answered requests only).
import type { ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { parseExposition, valueOf } from "../support/prometheus.js";

const TOKEN = "metrics-token-pools-0123456789";
const WAIT_MS = 1_500;

for (const kind of DATABASE_KINDS) {
  describe(`upstream connection pool (${kind})`, () => {
    let mock: MockUpstream;
    let gateway: TestGateway;
    let raw: string;
    let accountId: string;
    const held: ServerResponse[] = [];

    beforeAll(async () => {
      mock = await startMockUpstream();
      mock.handler = (_req, res) => void held.push(res);
      const config = mockConfig({ openaiUrl: mock.url }).replace("    apis: [chat]\n", `    apis: [chat]\n    max_connections: 2\n    connection_wait_ms: ${WAIT_MS}\n`);
      gateway = await startGateway(`${config}\nmetrics:\n  token_env: GW_TEST_METRICS_TOKEN\n`, { kind, env: { GW_TEST_METRICS_TOKEN: TOKEN } });
      const created = await gateway.createAccount({ balance: "10" });
      raw = created.raw;
      accountId = created.account.id;
    });
    afterAll(async () => {
      await gateway?.close();
      await mock?.close();
    });

    const chat = () =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 10 }),
      });
    const waiting = async () => {
      const response = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      return valueOf(parseExposition(await response.text()), "gateway_upstream_requests_waiting", { provider: "mockai" });
    };
    const until = async (condition: () => Promise<boolean> | boolean) => {
      for (let i = 0; i < 300 && !(await condition()); i++) await new Promise((r) => setTimeout(r, 10));
      expect(await condition()).toBe(true);
    };
    const answer = (res: ServerResponse) => json(res, 200, chatCompletion("ok"));
    const db = () => gateway.app.ctx.store.db;
    const usageRows = async () => (await db().selectFrom("ledger").select("cost_nano").where("account_id", "=", accountId).where("kind", "=", "usage").execute()).length;

    it("a third concurrent request waits for one of max_connections 2, counted by the gauge, then is sent", async () => {
      const answers = [chat(), chat(), chat()];
      await until(() => held.length === 2);
      await until(async () => (await waiting()) === 1);
      expect(mock.requests).toHaveLength(2);
      answer(held.shift()!);
      await until(() => held.length === 2);
      expect(await waiting()).toBe(0);
      for (const res of held.splice(0)) answer(res);
      expect((await Promise.all(answers)).map((r) => r.status)).toEqual([200, 200, 200]);
      expect(await usageRows()).toBe(3);
    });

    it("past connection_wait_ms the waiting request fails with provider_error, is never sent, and costs nothing", async () => {
      mock.requests.length = 0;
      const before = await db().selectFrom("accounts").select("balance_nano").where("id", "=", accountId).executeTakeFirstOrThrow();
      const first = [chat(), chat()];
      await until(() => held.length === 2);
      const late = await chat();
      const body = (await late.json()) as { error: { type: string; code: string; message: string } };
      expect(late.status).toBe(502);
      expect(body.error).toMatchObject({ type: "provider_error", code: "upstream_connection_wait_timeout" });
      expect(body.error.message).toContain(`${WAIT_MS} ms`);
      expect(late.headers.get("x-request-id")).toMatch(/^req_/);
      expect(late.headers.get("retry-after")).toBe("1");
      expect(await waiting()).toBe(0);
      for (const res of held.splice(0)) answer(res);
      expect((await Promise.all(first)).map((r) => r.status)).toEqual([200, 200]);
      // The late request never reached the upstream, even after the connections freed.
      await new Promise((r) => setTimeout(r, 100));
      expect(mock.requests).toHaveLength(2);
      expect(held).toHaveLength(0);
      // Billed: the two answered requests only; no hold left behind.
      expect(await usageRows()).toBe(5);
      const costs = await db().selectFrom("ledger").select("cost_nano").where("account_id", "=", accountId).where("kind", "=", "usage").orderBy("id", "desc").limit(2).execute();
      const after = await db().selectFrom("accounts").select(["balance_nano", "held_nano"]).where("id", "=", accountId).executeTakeFirstOrThrow();
      expect(BigInt(before.balance_nano) - BigInt(after.balance_nano)).toBe(costs.reduce((sum, row) => sum + BigInt(row.cost_nano), 0n));
      expect(BigInt(after.held_nano)).toBe(0n);
      expect(await db().selectFrom("holds").select("id").execute()).toHaveLength(0);
    });
  });
}
