// Every pricing dimension of src/core/dimensions.ts reaches every place that prices, stores or
// reports usage. The test enumerates the list, so a new entry that one of these places does not
// follow fails here: the config's price keys (schema and load), the model's prices, the pricing
// function, the ledger row's count and cost columns (settlement on SQLite, and gw_batch on
// PostgreSQL), /v1/usage, /v1/me, the dashboard's usage JSON, its ledger page and its CSV export.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CACHE_SAVING_COLUMN, DIMENSIONS, LEDGER_DIMENSION_COLUMNS } from "../../src/core/dimensions.js";
import { priceBreakdown } from "../../src/billing/pricing.js";
import { parseUsd } from "../../src/core/money.js";
import type { Usage } from "../../src/core/usage.js";
import { LEDGER_CSV_COLUMNS } from "../../src/admin/usage-queries.js";
import { signedInAccount, type DashboardClient } from "../dashboard/support.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

// A distinct non-zero price per dimension that has a price key, from the list itself.
const PRICES = Object.fromEntries(DIMENSIONS.flatMap((d, i) => (d.priceKey === null ? [] : [[d.priceKey, `0.0${i + 1}`]])));
const PRICING_YAML = `{ ${Object.entries(PRICES)
  .map(([key, usd]) => `${key}: "${usd}"`)
  .join(", ")}, per_image: { default: "0.04" } }`;

// A usage with every counted dimension non-zero: the parts of the input below the input, and a
// distinct count for every other one.
function everyDimensionUsage(): Usage {
  const usage: Usage = { inputTokens: 100_000, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 700, estimated: false };
  DIMENSIONS.forEach((d, i) => {
    if (d.usageField !== null) usage[d.usageField] = 1_000 * (i + 1) + i;
  });
  return usage;
}

describe.each(DATABASE_KINDS)("every pricing dimension, end to end, on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let user: { account: { id: string }; client: DashboardClient };
  let raw: string;
  let requestId: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const extra = `  - { id: every-dimension, kind: chat, provider: mockai, pricing: ${PRICING_YAML} }`;
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra }).replace("standard: { models: [gpt-mock, claude-mock] }", 'standard: { models: ["*"] }'), { kind });
    user = await signedInAccount(gateway, { balance: "1000" });
    const created = await gateway.app.ctx.store.keys.create({ accountId: user.account.id, budgetCap: null, tokenCap: null });
    raw = created.raw;
    const model = gateway.app.ctx.config.models.get("every-dimension")!;
    const billing = gateway.app.ctx.billing;
    const hold = await billing.admit({
      requestId: `req_dimensions_${kind}`,
      accountId: user.account.id,
      keyId: created.key.id,
      model,
      route: "chat",
      projectedInputTokens: 100_000,
      projectedOutputTokens: 10_000,
      projectedImages: 10,
    });
    requestId = hold.requestId;
    await billing.settle(hold, everyDimensionUsage(), "mockai");
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("the config takes a price for every dimension and the model carries it", () => {
    const pricing = gateway.app.ctx.config.models.get("every-dimension")!.pricing;
    for (const d of DIMENSIONS) {
      if (d.priceKey === null || d.priceField === null) continue;
      expect(pricing[d.priceField], d.name).toBe(parseUsd(PRICES[d.priceKey]!));
    }
  });

  it("the pricing function bills every dimension, and the shares sum to the cost", () => {
    const model = gateway.app.ctx.config.models.get("every-dimension")!;
    const breakdown = priceBreakdown(model, everyDimensionUsage());
    let sum = 0n;
    for (const d of DIMENSIONS) {
      expect(breakdown.counts[d.name], d.name).toBeGreaterThan(0n);
      expect(breakdown.costs[d.name], d.name).toBeGreaterThan(0n);
      sum += breakdown.costs[d.name];
    }
    expect(sum).toBe(breakdown.cost);
  });

  it("the ledger row holds every dimension's count and cost, summing to cost_nano", async () => {
    const row = (await gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("request_id", "=", requestId).executeTakeFirstOrThrow()) as unknown as Record<
      string,
      bigint
    >;
    for (const column of LEDGER_DIMENSION_COLUMNS) if (column !== CACHE_SAVING_COLUMN) expect(row[column], column).toBeGreaterThan(0n);
    let sum = 0n;
    for (const d of DIMENSIONS) {
      if (d.countColumn !== null) expect(row[d.countColumn], d.countColumn).toBeGreaterThan(0n);
      sum += row[d.costColumn]!;
    }
    expect(sum).toBe(row.cost_nano);
    expect(row[CACHE_SAVING_COLUMN]).not.toBe(0n);
  });

  const expectEveryDimension = (totals: { dimensions: Record<string, Record<string, number | string>>; cache: Record<string, unknown> }, where: string) => {
    for (const d of DIMENSIONS) {
      const entry = totals.dimensions[d.name];
      expect(entry, `${where}: ${d.name}`).toBeDefined();
      expect(entry![d.counts], `${where}: ${d.name} ${d.counts}`).toBeGreaterThan(0);
      expect(parseUsd(entry!.cost_usd as string), `${where}: ${d.name} cost`).toBeGreaterThan(0n);
    }
    expect(totals.cache.read_tokens).toBeGreaterThan(0);
    expect(totals.cache.write_tokens).toBeGreaterThan(0);
    expect(typeof totals.cache.hit_ratio).toBe("string");
    expect(totals.cache.saving_usd).toMatch(/^-?\d+\.\d+$/);
  };

  it("/v1/usage and /v1/me report every dimension", async () => {
    const headers = { authorization: `Bearer ${raw}` };
    const usage = (await (await fetch(`${gateway.url}/v1/usage`, { headers })).json()) as any;
    expectEveryDimension(usage.totals, "/v1/usage totals");
    expectEveryDimension(usage.by_model[0], "/v1/usage by_model");
    expect(usage.totals.reasoning_tokens).toBe(700);
    const me = (await (await fetch(`${gateway.url}/v1/me`, { headers })).json()) as any;
    expectEveryDimension(me.key_usage, "/v1/me key_usage");
    expectEveryDimension(me.key_usage.by_model[0], "/v1/me by_model");
  });

  it("the dashboard's usage JSON, ledger page and CSV report every dimension", async () => {
    const summary = (await user.client.get("/usage?days=7")).body;
    expectEveryDimension(summary.totals, "dashboard totals");
    expectEveryDimension(summary.by_key[0], "dashboard by_key");
    expectEveryDimension(summary.by_model[0], "dashboard by_model");
    expect(summary.totals.reasoning_tokens).toBe(700);

    const page = (await user.client.get("/ledger?limit=5")).body;
    const row = page.data.find((r: { request_id: string }) => r.request_id === requestId);
    for (const d of DIMENSIONS) expect(parseUsd(row[`${d.name}_cost_usd`]), d.name).toBeGreaterThan(0n);

    const csv = (await user.client.get("/ledger.csv")).text.trim().split("\r\n");
    const header = csv[0]!.split(",");
    expect(header).toEqual([...LEDGER_CSV_COLUMNS]);
    const line = csv.find((l) => l.includes(requestId))!.split(",");
    for (const d of DIMENSIONS) {
      expect(parseUsd(line[header.indexOf(`${d.name}_cost_usd`)]!), `csv ${d.name}`).toBeGreaterThan(0n);
      if (d.countColumn !== null) expect(Number(line[header.indexOf(d.countColumn)]), `csv ${d.countColumn}`).toBeGreaterThan(0);
    }
  });
});
