// The live catalog (issue 40, items 1-3): with catalog.source: database, a change made through the
// admin API on one gateway is served by a second gateway on the same database within a second, while
// a request in flight there finishes on the definition it started with; a refused change (a bad
// price, an unknown provider) lists every error and changes nothing; a rollback restores the exact
// earlier catalog as a new version; every change is audited; the write is one transaction; and with
// catalog.source: file every change is refused. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { CatalogStore } from "../../src/store/catalog-store.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

interface CatalogAnswer {
  source: string;
  read_only: boolean;
  version: number;
  reason: string;
  document: { providers: Record<string, unknown>; models: Array<Record<string, unknown>>; tiers: Record<string, unknown> };
  provider_keys: Array<{ id: string; provider: string; last4: string }>;
}

describe.each(DATABASE_KINDS)("the live catalog, on %s", (kind) => {
  let mock: MockUpstream;
  let database: TestDatabase;
  let a: TestGateway;
  let b: TestGateway;
  let token: string;
  let key: string;
  let release: (() => void) | null = null;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = async (req, res) => {
      // A request for "slow" waits until the test releases it: the request in flight.
      if (JSON.stringify(req.body).includes("slow please")) await new Promise<void>((resolve) => (release = resolve));
      json(res, 200, chatCompletion("fine", { usage: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 } }));
    };
    database = await createTestDatabase(kind);
    const config = mockConfig({ openaiUrl: mock.url, extra: "catalog: { source: database }" });
    a = await startGateway(config, { database });
    b = await startGateway(config, { database });
    token = (await a.app.ctx.store.adminTokens.create({ name: "catalog", scopes: ADMIN_SCOPES })).raw;
    key = (await a.createAccount({ balance: "1000" })).raw;
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
    await mock?.close();
  });

  const admin = (gateway: TestGateway, method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const catalog = async (gateway: TestGateway) => (await (await admin(gateway, "GET", "/catalog")).json()) as CatalogAnswer;
  const chat = (gateway: TestGateway, model: string, content = "hi") =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content }], max_tokens: 10 }),
    });
  const modelIds = async (gateway: TestGateway) =>
    ((await (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);

  /** The document with gpt-mock's prices changed and a model added to the standard tier. */
  function edited(document: CatalogAnswer["document"]) {
    const models = document.models.map((m) => (m.id === "gpt-mock" ? { ...m, pricing: { input_per_mtok: "5.00", output_per_mtok: "10.00" } } : m));
    models.push({ id: "new-mock", kind: "chat", provider: "mockai", pricing: { input_per_mtok: "1", output_per_mtok: "1" } });
    return { ...document, models, tiers: { ...document.tiers, standard: { models: ["gpt-mock", "claude-mock", "new-mock"] } } };
  }

  it("is seeded once from the file, its keys moved into the database and shown by their last four characters", async () => {
    const seen = await catalog(b);
    expect(seen).toMatchObject({ source: "database", read_only: false, version: 1 });
    expect(seen.reason).toMatch(/^seed from /);
    expect(seen.document.models.map((m) => m.id)).toEqual(["gpt-mock", "claude-mock", "premium-mock"]);
    expect(JSON.stringify(seen.document)).not.toContain("sk-mock");
    expect(seen.provider_keys.map((k) => [k.provider, k.last4])).toEqual([
      ["mockai", "0001"],
      ["mockanthropic", "0001"],
    ]);
    expect(JSON.stringify(seen)).not.toContain("sk-mock-openai-key");
  });

  it("serves a change on the other gateway within a second; a request in flight finishes on the old prices", async () => {
    const before = await catalog(a);
    const inFlight = chat(b, "gpt-mock", "slow please");
    while (release === null) await sleep(5);
    const written = await admin(a, "POST", "/catalog/versions", { document: edited(before.document), base_version: before.version });
    expect(written.status).toBe(201);
    expect(((await written.json()) as { version: number }).version).toBe(2);
    const changedAt = performance.now();
    while (!(await modelIds(b)).includes("new-mock")) {
      expect(performance.now() - changedAt).toBeLessThan(1_000);
      await sleep(20);
    }
    release?.();
    const old = await inFlight;
    expect(old.status).toBe(200);
    // 1M input and 1M output tokens at the old prices ($1 and $2 per million).
    expect(old.headers.get("x-gateway-cost-usd")).toBe("3.00");
    const now = await chat(b, "gpt-mock");
    expect(now.headers.get("x-gateway-cost-usd")).toBe("15.00");
    expect((await chat(b, "new-mock")).status).toBe(200);
  });

  it("refuses a bad change with every error and its field path, and changes nothing", async () => {
    const before = await catalog(a);
    const document = {
      ...before.document,
      models: [
        ...before.document.models.filter((m) => m.id !== "gpt-mock"),
        { id: "gpt-mock", kind: "chat", provider: "mockai", pricing: { input_per_mtok: "abc" } },
        { id: "orphan", kind: "chat", provider: "nowhere" },
      ],
    };
    const refused = await admin(a, "POST", "/catalog/versions", { document, base_version: before.version });
    expect(refused.status).toBe(400);
    expect(refused.headers.get("x-request-id")).toMatch(/^req_/);
    const body = (await refused.json()) as { error: { type: string; errors: Array<{ field: string; message: string }> } };
    expect(body.error.type).toBe("invalid_request");
    expect(body.error.errors.map((e) => e.field).sort()).toEqual(["models[3].pricing.input_per_mtok", "models[4].provider"]);
    expect((await catalog(a)).version).toBe(before.version);
    const stale = await admin(a, "POST", "/catalog/versions", { document: before.document, base_version: before.version - 1 });
    expect(stale.status).toBe(409);
    expect((await catalog(b)).version).toBe(before.version);
  });

  it("rolls back to an earlier version exactly, as a new version, and every change is audited", async () => {
    const first = (await (await admin(a, "GET", "/catalog/versions/1")).json()) as CatalogAnswer;
    const rolled = await admin(a, "POST", "/catalog/rollback", { version: 1 });
    expect(rolled.status).toBe(201);
    const version = ((await rolled.json()) as { version: number }).version;
    const now = await catalog(a);
    expect(now.version).toBe(version);
    expect(now.reason).toBe("rollback to 1");
    expect(now.document).toEqual(first.document);
    const changedAt = performance.now();
    while ((await modelIds(b)).includes("new-mock")) {
      expect(performance.now() - changedAt).toBeLessThan(1_000);
      await sleep(20);
    }
    const diff = (await (await admin(a, "GET", `/catalog/diff?from=2&to=${version}`)).json()) as { changes: { models: { removed: object; changed: object } } };
    expect(Object.keys(diff.changes.models.removed)).toEqual(["new-mock"]);
    expect(Object.keys(diff.changes.models.changed)).toEqual(["gpt-mock"]);
    const audit = (await (await admin(a, "GET", "/audit?target_type=catalog")).json()) as { data: Array<{ action: string; before: unknown; after: unknown }> };
    expect(audit.data.map((row) => row.action)).toEqual(["catalog.rollback", "catalog.update", "catalog.seed"]);
    expect(audit.data[1]!.after).toMatchObject({ version: 2, models: { "new-mock": { id: "new-mock" }, "gpt-mock": { pricing: { input_per_mtok: "5.00" } } } });
    expect(audit.data[1]!.before).toMatchObject({ version: 1, models: { "gpt-mock": { pricing: { input_per_mtok: "1.00" } } } });
  });

  it("adds and removes a provider key, served at once without its secret ever shown", async () => {
    const added = await admin(a, "POST", "/catalog/provider-keys", { provider: "mockai", key: "sk-new-provider-key-9876", label: "rotation" });
    expect(added.status).toBe(201);
    const info = ((await added.json()) as { provider_key: { id: string; last4: string } }).provider_key;
    expect(info.last4).toBe("9876");
    expect(JSON.stringify(await catalog(a))).not.toContain("sk-new-provider-key");
    const changedAt = performance.now();
    while (!b.app.ctx.live.current.config.providers.get("mockai")!.sharedKeys.includes("sk-new-provider-key-9876")) {
      expect(performance.now() - changedAt).toBeLessThan(1_000);
      await sleep(20);
    }
    expect((await admin(a, "DELETE", `/catalog/provider-keys/${info.id}`)).status).toBe(200);
    expect((await admin(a, "POST", "/catalog/provider-keys", { provider: "nowhere", key: "sk-another-key-1234" })).status).toBe(404);
  });

  it("never loses a change committed while a process reads the catalog", async () => {
    // b reads the keys, and a key is added before the read returns: the head b records must be the
    // one from before that change, so that its next read sees a newer head and serves the key.
    const { activeSecrets } = CatalogStore.prototype as { activeSecrets: (this: CatalogStore) => Promise<Map<string, string[]>> };
    let injected = false;
    const spy = vi.spyOn(b.app.ctx.store.catalog, "activeSecrets").mockImplementation(async function (this: CatalogStore) {
      const secrets = await activeSecrets.call(this);
      if (!injected) {
        injected = true;
        await a.app.ctx.store.catalog.addProviderKey({ provider: "mockai", key: "sk-added-during-a-read-5555", label: "race" });
      }
      return secrets;
    });
    try {
      await b.app.ctx.catalog.setProviderKeyStatus(
        { type: "cli", id: null, name: "test", clientAddress: null, requestId: null },
        (await catalog(a)).provider_keys[0]!.id,
        "disabled",
      );
      const changedAt = performance.now();
      while (!b.app.ctx.live.current.config.providers.get("mockai")!.sharedKeys.includes("sk-added-during-a-read-5555")) {
        expect(performance.now() - changedAt).toBeLessThan(2_000);
        await sleep(20);
      }
      expect(injected).toBe(true);
    } finally {
      spy.mockRestore();
    }
  });

  it("writes a version, its head and its audit row in one transaction", async () => {
    const before = await catalog(a);
    const head = await a.app.ctx.store.catalog.head();
    const { append } = CatalogStore.prototype as { append: (this: CatalogStore, input: Parameters<CatalogStore["append"]>[0]) => Promise<unknown> };
    const spy = vi.spyOn(CatalogStore.prototype, "append").mockImplementation(async function (this: CatalogStore, input) {
      await append.call(this, input);
      throw new Error("the disk filled up after the version was written");
    });
    try {
      const response = await admin(a, "POST", "/catalog/versions", { document: edited(before.document), base_version: before.version });
      expect(response.status).toBe(500);
    } finally {
      spy.mockRestore();
    }
    expect((await catalog(a)).version).toBe(before.version);
    expect(await a.app.ctx.store.catalog.head()).toBe(head);
  });
});

describe("a catalog from the file", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let token: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
    token = (await gateway.app.ctx.store.adminTokens.create({ name: "catalog", scopes: ADMIN_SCOPES })).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("is shown read-only, and every change is refused with 409 catalog_read_only", async () => {
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const seen = (await (await fetch(`${gateway.url}/admin/v1/catalog`, { headers })).json()) as CatalogAnswer;
    expect(seen).toMatchObject({ source: "file", read_only: true, version: null });
    expect(seen.document.models).toHaveLength(3);
    for (const [path, body] of [
      ["/catalog/versions", { document: seen.document, base_version: 1 }],
      ["/catalog/rollback", { version: 1 }],
      ["/catalog/provider-keys", { provider: "mockai", key: "sk-some-key-0000" }],
    ] as const) {
      const response = await fetch(`${gateway.url}/admin/v1${path}`, { method: "POST", headers, body: JSON.stringify(body) });
      expect(response.status).toBe(409);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("catalog_read_only");
    }
  });
});
