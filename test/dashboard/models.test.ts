// GET /dashboard/api/models: the account's tier, narrowed by one of its keys' allowed models, the
// same list GET /v1/models gives that key; every billing dimension's price from the dimension list;
// another account's key is a 404 like a missing one; server.public_url reaches the snippets.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DIMENSIONS } from "../../src/core/dimensions.js";
import { ConfigError, publicUrlFrom } from "../../src/config/load.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { expectError, signedInAccount, DashboardClient, type ApiResponse } from "./support.js";

const EXTRA = `
  - id: image-mock
    kind: image
    provider: mockai
    modalities: { input: [text], output: [image] }
    pricing: { per_image: { "1024x1024/hd": "0.08", default: "0.04" } }
  - id: long-mock
    kind: chat
    provider: mockai
    context_window: 1000000
    max_output_tokens: 64000
    modalities: { input: [text, image], output: [text] }
    pricing:
      input_per_mtok: "3.00"
      output_per_mtok: "15.00"
      web_search_per_call: "0.01"
      long_context: { above_input_tokens: 200000, input_per_mtok: "6.00", output_per_mtok: "22.50" }
`;
// mockConfig's tiers name their models; these two join the standard tier by a second tier line.
const config = (extraServer = "") =>
  mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: EXTRA })
    .replace("standard: { models: [gpt-mock, claude-mock] }", "standard: { models: [gpt-mock, claude-mock, image-mock, long-mock] }")
    .replace("server:\n  default_tier: standard", `server:\n  default_tier: standard${extraServer}`);

type ModelBody = { id: string; kind: string; prices: Array<{ dimension: string; variant: string | null; usd: string }>; [k: string]: unknown };

describe.each(DATABASE_KINDS)("dashboard models on %s", (kind) => {
  let gateway: TestGateway;
  let client: DashboardClient;

  beforeAll(async () => {
    gateway = await startGateway(config(), { kind });
    ({ client } = await signedInAccount(gateway));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const ids = (response: ApiResponse) => (response.body.data as ModelBody[]).map((m) => m.id);

  it("lists every model of the tier with kind, limits, modalities and one price per dimension", async () => {
    const response = await client.get("/models");
    expect(response.status, response.text).toBe(200);
    expect(response.body.tier).toBe("standard");
    expect(response.body.price_factor).toBeNull();
    expect(response.body.key).toBeNull();
    expect(response.body.public_url).toBeNull();
    expect(ids(response)).toEqual(["gpt-mock", "claude-mock", "image-mock", "long-mock"]);
    const byId = new Map((response.body.data as ModelBody[]).map((m) => [m.id, m]));
    const gpt = byId.get("gpt-mock")!;
    expect(gpt).toMatchObject({ kind: "chat", context_window: 128000, max_output_tokens: 4096, demo: false, routing_group: false, long_context: null });
    // Every dimension that has a price key, in the list's order; images only where per_image has sizes.
    const priced = DIMENSIONS.filter((d) => d.priceField !== null).map((d) => d.name);
    expect(gpt.prices.map((p) => p.dimension)).toEqual(priced);
    const usd = (m: ModelBody, dimension: string, variant: string | null = null) => m.prices.find((p) => p.dimension === dimension && p.variant === variant)?.usd;
    expect(usd(gpt, "input")).toBe("1.00");
    expect(usd(gpt, "cached_input")).toBe("0.50");
    expect(usd(gpt, "cache_write_5m")).toBe("1.00"); // defaults to the input price
    expect(usd(gpt, "output")).toBe("2.00");
    expect(usd(gpt, "web_search")).toBe("0.00");

    const image = byId.get("image-mock")!;
    expect(image.kind).toBe("image");
    expect(image.prices.filter((p) => p.dimension === "image").map((p) => [p.variant, p.usd])).toEqual([
      ["1024x1024/hd", "0.08"],
      ["default", "0.04"],
    ]);

    const long = byId.get("long-mock")!;
    expect(long.modalities).toEqual({ input: ["text", "image"], output: ["text"] });
    expect(usd(long, "web_search")).toBe("0.01");
    expect(long.long_context).toMatchObject({ above_input_tokens: 200000 });
    const tiered = (long.long_context as { prices: Array<{ dimension: string; usd: string }> }).prices;
    expect(tiered.find((p) => p.dimension === "input")?.usd).toBe("6.00");
    expect(tiered.find((p) => p.dimension === "output")?.usd).toBe("22.50");
  });

  it("narrows the list to a key's allowed models, exactly as GET /v1/models does for that key", async () => {
    const created = await client.post("/keys", { name: "narrow", allowed_models: ["claude-mock", "long-mock"] });
    expect(created.status, created.text).toBe(201);
    const response = await client.get(`/models?key_id=${created.body.key.id}`);
    expect(response.status, response.text).toBe(200);
    expect(response.body.key).toMatchObject({ id: created.body.key.id, name: "narrow", allowed_models: ["claude-mock", "long-mock"] });
    expect(ids(response)).toEqual(["claude-mock", "long-mock"]);
    const v1 = await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${created.body.raw_key}` } });
    expect(((await v1.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)).toEqual(ids(response));

    const open = await client.post("/keys", { name: "open" });
    expect(ids(await client.get(`/models?key_id=${open.body.key.id}`))).toEqual(["gpt-mock", "claude-mock", "image-mock", "long-mock"]);
  });

  it("answers 404 for another account's key and for a missing one, 400 for a bad key_id, 401 signed out", async () => {
    const { client: other } = await signedInAccount(gateway);
    const theirs = await other.post("/keys", { name: "theirs" });
    expectError(await client.get(`/models?key_id=${theirs.body.key.id}`), 404, "not_found");
    expectError(await client.get("/models?key_id=key_missing"), 404, "not_found");
    expectError(await client.get(`/models?key_id=${"x".repeat(101)}`), 400, "invalid_request");
    expectError(await new DashboardClient(gateway.url).get("/models"), 401, "unauthenticated");
  });
});

describe("server.public_url", () => {
  it("reaches the dashboard without its trailing slash", async () => {
    const gateway = await startGateway(config('\n  public_url: "https://llm.example.com/gw/"'));
    try {
      const { client } = await signedInAccount(gateway);
      expect((await client.get("/models")).body.public_url).toBe("https://llm.example.com/gw");
    } finally {
      await gateway.close();
    }
  });

  it("accepts an http(s) address only, without credentials, query or fragment", () => {
    expect(publicUrlFrom(undefined, "f")).toBeNull();
    expect(publicUrlFrom("http://127.0.0.1:8080", "f")).toBe("http://127.0.0.1:8080");
    expect(publicUrlFrom("https://LLM.example.com//", "f")).toBe("https://llm.example.com");
    for (const bad of ["llm.example.com", "ftp://llm.example.com", "https://u:p@llm.example.com", "https://llm.example.com/?a=1", "https://llm.example.com/#x"]) {
      expect(() => publicUrlFrom(bad, "f"), bad).toThrow(ConfigError);
    }
  });
});

describe("a tier with a price factor", () => {
  it("shows the account the prices its tier pays, and the factor", async () => {
    const gateway = await startGateway(
      config().replace(
        "standard: { models: [gpt-mock, claude-mock, image-mock, long-mock] }",
        'standard: { models: [gpt-mock, claude-mock, image-mock, long-mock], price_factor: "1.5" }',
      ),
    );
    try {
      const { client } = await signedInAccount(gateway);
      const response = await client.get("/models");
      expect(response.body.price_factor).toBe("1.5");
      const gpt = (response.body.data as ModelBody[]).find((m) => m.id === "gpt-mock")!;
      // gpt-mock's list prices are 1.00 / 0.50 / 2.00 USD per million tokens.
      const price = (dimension: string) => gpt.prices.find((p) => p.dimension === dimension)!.usd;
      expect([price("input"), price("cached_input"), price("output")]).toEqual(["1.50", "0.75", "3.00"]);
      const image = (response.body.data as ModelBody[]).find((m) => m.id === "image-mock")!;
      expect(image.prices.find((p) => p.variant === "1024x1024/hd")!.usd).toBe("0.12");
    } finally {
      await gateway.close();
    }
  });
});
