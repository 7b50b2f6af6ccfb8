// Per-tier price factors (issue 40, item 5; ADR 0035): an account of a tier with price_factor "1.5"
// is held and charged exactly 1.5 times the list price (integer nano-USD), its ledger row records the
// factor (price_factor_ppm, shown as "1.5" by /v1/requests/{id} and the dashboard's ledger), the
// hash chain still verifies, and the figures the ledger determines (balances, usage reports) still
// add up. An account of a tier without a factor pays the list price and its row records none. On
// SQLite and PostgreSQL.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { LEDGER_CHAIN_COLUMNS, ledgerRowHash } from "../../src/store/ledger-chain.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

// 1,000 input tokens at 1.00 USD/Mtok and 500 output tokens at 2.00 USD/Mtok: 0.002 USD.
const LIST_COST = 2_000_000n;

describe.each(DATABASE_KINDS)("a tier's price factor, on %s", (kind) => {
  let mock: MockUpstream;
  let database: TestDatabase;
  let gateway: TestGateway;
  let release: (() => void) | null = null;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = async (req, res) => {
      if (JSON.stringify(req.body).includes("wait please")) await new Promise<void>((resolve) => (release = resolve));
      json(res, 200, chatCompletion("fine", { usage: { prompt_tokens: 1_000, completion_tokens: 500, total_tokens: 1_500 } }));
    };
    database = await createTestDatabase(kind);
    const config = mockConfig({ openaiUrl: mock.url }).replace('premium: { models: ["*"] }', 'premium: { models: ["*"], price_factor: "1.5" }');
    expect(config).toContain('price_factor: "1.5"');
    gateway = await startGateway(config, { database });
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
    await mock?.close();
  });

  const chat = (key: string, content = "hello") =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content }], max_tokens: 800 }),
    });
  const ledgerRow = (requestId: string) => gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("request_id", "=", requestId).executeTakeFirstOrThrow();

  it("holds and charges exactly 1.5 times the list price, and the ledger row records the factor", async () => {
    const standard = await gateway.createAccount({ balance: "10" });
    const premium = await gateway.createAccount({ balance: "10", tier: "premium" });

    // The holds of two identical requests in flight: the premium one is exactly 1.5 times the other.
    const holds: bigint[] = [];
    for (const account of [standard, premium]) {
      release = null;
      const pending = chat(account.raw, "wait please");
      while (release === null) await new Promise((resolve) => setTimeout(resolve, 10));
      const hold = await gateway.app.ctx.store.db.selectFrom("holds").select("amount_nano").where("account_id", "=", account.account.id).executeTakeFirstOrThrow();
      holds.push(BigInt(hold.amount_nano));
      (release as () => void)();
      expect((await pending).status).toBe(200);
    }
    expect(holds[0]! > 0n).toBe(true);
    expect(holds[1]!).toBe((holds[0]! * 3n) / 2n);
    expect((holds[0]! * 3n) % 2n).toBe(0n);

    const listed = await chat(standard.raw);
    const factored = await chat(premium.raw);
    expect(listed.headers.get("x-gateway-cost-usd")).toBe("0.002");
    expect(factored.headers.get("x-gateway-cost-usd")).toBe("0.003");
    const listedRow = await ledgerRow(listed.headers.get("x-request-id")!);
    const factoredRow = await ledgerRow(factored.headers.get("x-request-id")!);
    expect(BigInt(listedRow.cost_nano)).toBe(LIST_COST);
    expect(BigInt(factoredRow.cost_nano)).toBe((LIST_COST * 3n) / 2n);
    expect(BigInt(factoredRow.input_cost_nano) + BigInt(factoredRow.output_cost_nano)).toBe(BigInt(factoredRow.cost_nano));
    expect(listedRow.price_factor_ppm).toBeNull();
    expect(BigInt(factoredRow.price_factor_ppm!)).toBe(1_500_000n);

    // The client sees the factor its request was charged at.
    const record = async (key: string, id: string) =>
      (await (await fetch(`${gateway.url}/v1/requests/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { price_factor: string | null; cost_usd: string };
    expect(await record(premium.raw, factored.headers.get("x-request-id")!)).toMatchObject({ price_factor: "1.5", cost_usd: "0.003" });
    expect(await record(standard.raw, listed.headers.get("x-request-id")!)).toMatchObject({ price_factor: null, cost_usd: "0.002" });

    // Two requests each: balances and usage reports add up to the ledger.
    const usage = (await (await fetch(`${gateway.url}/v1/usage`, { headers: { authorization: `Bearer ${premium.raw}` } })).json()) as {
      totals: { cost_usd: string; requests: number };
    };
    expect(usage.totals).toMatchObject({ requests: 2, cost_usd: "0.006" });
    const me = (await (await fetch(`${gateway.url}/v1/me`, { headers: { authorization: `Bearer ${premium.raw}` } })).json()) as { balance_usd: string };
    expect(me.balance_usd).toBe("9.994");
    expect((await gateway.app.ctx.store.ledger.recompute()).differences).toEqual([]);
    const verified = await gateway.app.ctx.store.ledger.verify();
    expect(verified.broken).toBeNull();
    expect(verified.rows).toBeGreaterThanOrEqual(6);
  });

  it("a factor changed afterwards in a row breaks the chain where it was changed", async () => {
    const premium = await gateway.createAccount({ balance: "10", tier: "premium" });
    const answer = await chat(premium.raw);
    const row = await ledgerRow(answer.headers.get("x-request-id")!);
    expect(BigInt(row.price_factor_ppm!)).toBe(1_500_000n);
    expect((await gateway.app.ctx.store.ledger.verify({ accountId: premium.account.id })).broken).toBeNull();
    // The chain covers the column: the row's hash recomputed with another factor is not the stored one.
    expect(LEDGER_CHAIN_COLUMNS.map((c) => c.name)).toContain("price_factor_ppm");
    const previous = await gateway.app.ctx.store.db
      .selectFrom("ledger")
      .select("hash")
      .where("account_id", "=", premium.account.id)
      .where("id", "<", row.id)
      .orderBy("id", "desc")
      .executeTakeFirstOrThrow();
    const asStored = ledgerRowHash(previous.hash!, row);
    expect(asStored).toBe(row.hash);
    expect(ledgerRowHash(previous.hash!, { ...row, price_factor_ppm: 1_000_000n })).not.toBe(row.hash);
  });

  it("refuses a factor that is not an exact decimal above 0 and at most 1000", async () => {
    for (const factor of ['"0"', '"1.0000001"', '"abc"', '"1001"', "1.5"]) {
      const dir = mkdtempSync(join(tmpdir(), "gw-factor-"));
      writeFileSync(
        join(dir, "gateway.config.yaml"),
        mockConfig({ openaiUrl: mock.url }).replace('premium: { models: ["*"] }', `premium: { models: ["*"], price_factor: ${factor} }`),
      );
      expect(() => loadConfig({ ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml") }, dir), factor).toThrow(/tiers\.premium\.price_factor/);
    }
  });
});
