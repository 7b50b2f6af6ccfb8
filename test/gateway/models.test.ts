// GET /v1/models (the key's tier only) and GET /v1/catalog (public, exact decimal prices, cacheable).
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCompatibilitySummary } from "../../src/http/compatibility.js";
import { startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

describe("models and catalog", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("lists only the models of the key's tier, in the OpenAI list shape", async () => {
    const standard = new OpenAI({ apiKey: (await gateway.createAccount()).raw, baseURL: `${gateway.url}/v1` });
    const ids = [];
    for await (const model of standard.models.list()) ids.push(model.id);
    expect(ids.sort()).toEqual(["claude-mock", "gpt-mock"]);
    const one = await standard.models.retrieve("gpt-mock");
    expect(one).toMatchObject({ id: "gpt-mock", object: "model", owned_by: "mockai" });
    await expect(standard.models.retrieve("premium-mock")).rejects.toBeInstanceOf(OpenAI.NotFoundError);

    const premium = new OpenAI({ apiKey: (await gateway.createAccount({ tier: "premium" })).raw, baseURL: `${gateway.url}/v1` });
    const all = [];
    for await (const model of premium.models.list()) all.push(model.id);
    expect(all.sort()).toEqual(["claude-mock", "gpt-mock", "premium-mock"]);
  });

  it("needs a key", async () => {
    const response = await fetch(`${gateway.url}/v1/models`);
    expect(response.status).toBe(401);
  });

  it("publishes the catalog without authentication, with exact prices, tiers, ETag and Cache-Control", async () => {
    const response = await fetch(`${gateway.url}/v1/catalog`);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toMatch(/max-age=\d+/);
    const etag = response.headers.get("etag");
    expect(etag).toMatch(/^".+"$/);
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    const catalog = (await response.json()) as { data: Array<Record<string, any>>; compatibility: Record<string, any> | null };
    // The compatibility matrix's summary (docs/compatibility.json, written by the matrix test).
    expect(catalog.compatibility).toEqual(loadCompatibilitySummary());
    expect(catalog.compatibility?.results["claude-code"]?.anthropic?.plain, "the catalog serves no compatibility summary").toMatch(/^(pass|fail)$/);
    expect(catalog.compatibility?.mcp?.results["mcp-sdk"]?.stdio?.["tool-call"], "the catalog serves no MCP part of the matrix").toMatch(/^(pass|fail)$/);
    const gpt = catalog.data.find((m) => m.id === "gpt-mock")!;
    expect(gpt).toMatchObject({
      kind: "chat",
      context_window: 128000,
      max_output_tokens: 4096,
      modalities: { input: ["text"], output: ["text"] },
      tiers: ["standard", "premium"],
    });
    expect(gpt.pricing).toMatchObject({
      input_per_token: "0.000001",
      cached_input_per_token: "0.0000005",
      output_per_token: "0.000002",
      input_per_million_tokens: "1.00",
      output_per_million_tokens: "2.00",
      // Every dimension under its config key; the unconfigured ones at their documented defaults.
      input_per_mtok: "1.00",
      cached_input_per_mtok: "0.50",
      cache_write_5m_per_mtok: "1.00",
      cache_write_1h_per_mtok: "1.00",
      output_per_mtok: "2.00",
      web_search_per_call: "0.00",
      per_request: "0.00",
    });
    expect(gpt.pricing).not.toHaveProperty("long_context");
    expect(catalog.data.find((m) => m.id === "premium-mock")!.tiers).toEqual(["premium"]);
    expect(JSON.stringify(catalog)).not.toContain(mock.host);
    expect(JSON.stringify(catalog)).not.toContain("sk-mock");

    const cached = await fetch(`${gateway.url}/v1/catalog`, { headers: { "if-none-match": etag! } });
    expect(cached.status).toBe(304);
  });
});
