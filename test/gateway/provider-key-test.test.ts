// "Test" on a shared provider key (issue 40, item 4): one one-token chat with that key only, its
// status, latency and cost in the answer; the cost is the operator's (a ledger row on the operator's
// system account, the chain and every recomputed figure intact), no customer's balance or ledger
// moves; the test is audited; a key the upstream refuses is disabled like in traffic and not tried
// again. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { OPERATOR_ACCOUNT_ID } from "../../src/store/operator-usage.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const GOOD = "sk-good-key-0002";
const BAD = "sk-bad-key-0001";

interface KeyTestAnswer {
  object: string;
  key_id: string;
  provider: string;
  model: string;
  request_id: string;
  ok: boolean;
  status: number | null;
  latency_ms: number;
  cost_nano: string;
  refused: boolean;
  disabled: boolean;
  error: string | null;
}

describe.each(DATABASE_KINDS)("testing a provider key, on %s", (kind) => {
  let mock: MockUpstream;
  let database: TestDatabase;
  let gateway: TestGateway;
  let token: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (req, res) => {
      if (req.headers.authorization === `Bearer ${BAD}`) return json(res, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
      json(res, 200, chatCompletion("O", { usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }));
    };
    database = await createTestDatabase(kind);
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, openaiKeys: [BAD, GOOD], extra: "catalog: { source: database }" }), { database });
    token = (await gateway.app.ctx.store.adminTokens.create({ name: "keys", scopes: ADMIN_SCOPES })).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
    await mock?.close();
  });

  const admin = (method: string, path: string, authorization = `Bearer ${token}`) => fetch(`${gateway.url}/admin/v1${path}`, { method, headers: { authorization } });
  const keyEnding = async (last4: string) =>
    ((await (await admin("GET", "/catalog")).json()) as { provider_keys: Array<{ id: string; last4: string; status: string }> }).provider_keys.find((k) => k.last4 === last4)!;
  const ledgerRow = (requestId: string) => gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("request_id", "=", requestId).executeTakeFirst();

  it("sends one one-token chat with that key and records its cost as the operator's, not a customer's", async () => {
    const customer = await gateway.createAccount({ balance: "5" });
    const customerLedgerBefore = await gateway.app.ctx.store.ledger.count(customer.account.id);
    const good = await keyEnding("0002");
    const sentBefore = mock.requests.length;

    const response = await admin("POST", `/catalog/provider-keys/${good.id}/test`);
    expect(response.status).toBe(200);
    const answer = (await response.json()) as KeyTestAnswer;
    expect(answer).toMatchObject({
      object: "provider_key.test",
      key_id: good.id,
      provider: "mockai",
      model: "gpt-mock",
      ok: true,
      status: 200,
      refused: false,
      disabled: false,
      error: null,
    });
    // 10 input tokens at 1.00 and 1 output token at 2.00 USD per million: 12,000 nano-USD.
    expect(answer.cost_nano).toBe("12000");
    expect(answer.latency_ms).toBeGreaterThanOrEqual(0);

    // One request, with that key, asking for one token of the cheapest chat model (premium-mock costs more).
    const sent = mock.requests.slice(sentBefore);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers.authorization).toBe(`Bearer ${GOOD}`);
    expect(sent[0]!.body).toMatchObject({ model: "upstream-gpt", max_tokens: 1 });

    const row = await ledgerRow(answer.request_id);
    expect(row).toMatchObject({ account_id: OPERATOR_ACCOUNT_ID, kind: "usage", provider: "mockai", model: "gpt-mock", key_id: null });
    expect(BigInt(row!.cost_nano)).toBe(12_000n);
    expect(BigInt(row!.input_tokens)).toBe(10n);

    // No customer paid: the balance and the ledger of the customer are as they were.
    const after = await gateway.app.ctx.store.accounts.get(customer.account.id);
    expect(after!.balance).toBe(5_000_000_000n);
    expect(await gateway.app.ctx.store.ledger.count(customer.account.id)).toBe(customerLedgerBefore);
    // The operator's account has no balance to take from and is nobody's to manage.
    const operator = await gateway.app.ctx.store.accounts.get(OPERATOR_ACCOUNT_ID);
    expect(operator).toMatchObject({ balance: 0n, status: "closed" });
    expect((await gateway.app.ctx.store.accounts.list()).map((a) => a.id)).not.toContain(OPERATOR_ACCOUNT_ID);

    // The chain holds and every figure the ledger determines agrees with it.
    expect((await gateway.app.ctx.store.ledger.verify()).broken).toBeNull();
    expect((await gateway.app.ctx.store.ledger.recompute()).differences).toEqual([]);

    const audit = (await (await admin("GET", "/audit?action=catalog.provider_key.test")).json()) as { data: Array<{ target: { id: string }; after: Record<string, unknown> }> };
    expect(audit.data[0]!.target.id).toBe(good.id);
    expect(audit.data[0]!.after).toMatchObject({ request_id: answer.request_id, status: 200, cost_nano: "12000", refused: false });
    expect(JSON.stringify(audit.data[0]!.after)).not.toContain(GOOD);
  });

  it("shows a key the upstream refuses as refused, disables it, charges nothing, and traffic no longer tries it", async () => {
    const bad = await keyEnding("0001");
    const answer = (await (await admin("POST", `/catalog/provider-keys/${bad.id}/test`)).json()) as KeyTestAnswer;
    expect(answer).toMatchObject({ ok: false, status: 401, refused: true, disabled: true, cost_nano: "0" });
    expect(answer.error).toContain("refused");
    expect(answer.error).not.toContain("Incorrect API key");
    expect(await ledgerRow(answer.request_id)).toBeUndefined();
    expect((await keyEnding("0001")).status).toBe("disabled");
    const autoDisabled = (await (await admin("GET", "/audit?action=catalog.provider_key.auto_disable")).json()) as { data: Array<{ target: { id: string } }> };
    expect(autoDisabled.data.map((a) => a.target.id)).toEqual([bad.id]);

    const { raw } = await gateway.createAccount();
    const triedBad = () => mock.requests.filter((r) => r.headers.authorization === `Bearer ${BAD}`).length;
    const before = triedBad();
    for (let i = 0; i < 4; i++) {
      const chat = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(chat.status).toBe(200);
    }
    expect(triedBad()).toBe(before);
  });

  it("answers 404 for an unknown key and needs catalog:write", async () => {
    expect((await admin("POST", "/catalog/provider-keys/pk_nope/test")).status).toBe(404);
    const reader = (await gateway.app.ctx.store.adminTokens.create({ name: "reader", scopes: ["catalog:read"] })).raw;
    const good = await keyEnding("0002");
    expect((await admin("POST", `/catalog/provider-keys/${good.id}/test`, `Bearer ${reader}`)).status).toBe(403);
  });
});
