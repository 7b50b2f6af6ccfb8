// Per-entity edits of the live catalog (issue 40, item 1): providers, models, tiers and routing
// groups listed, added, changed, disabled, enabled and deleted through /admin/v1/catalog/..., each
// one new version checked like the whole document; a refused change (a bad price, an unknown
// provider, a stale base, a provider still in use) changes nothing; a disabled model is unlisted and
// refused as unknown, a disabled provider's deployments are not routed to; every change is audited
// with the entry before and after. Through the real request path, on SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

interface Change {
  object: string;
  op: string;
  name: string;
  version: { version: number; reason: string };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}
interface ErrorBody {
  error: { type: string; code?: string; errors?: Array<{ field: string; message: string }> };
}

describe.each(DATABASE_KINDS)("per-entity catalog edits, on %s", (kind) => {
  let mock: MockUpstream;
  let database: TestDatabase;
  let gateway: TestGateway;
  let token: string;
  let readToken: string;
  let key: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = async (_req, res) => json(res, 200, chatCompletion("fine"));
    database = await createTestDatabase(kind);
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: "catalog: { source: database }" }), { database });
    token = (await gateway.app.ctx.store.adminTokens.create({ name: "catalog", scopes: ADMIN_SCOPES })).raw;
    readToken = (await gateway.app.ctx.store.adminTokens.create({ name: "reader", scopes: ["catalog:read"] })).raw;
    key = (await gateway.createAccount({ balance: "1000" })).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
    await mock?.close();
  });

  const admin = (method: string, path: string, body?: unknown, bearer = token) =>
    fetch(`${gateway.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const version = async () => ((await (await admin("GET", "/catalog")).json()) as { version: number }).version;
  const document = async () => ((await (await admin("GET", "/catalog")).json()) as { document: unknown }).document;
  /** A write that must succeed: its answer. */
  const write = async (method: string, path: string, body: Record<string, unknown> = {}, status = 200) => {
    const response = await admin(method, path, method === "DELETE" ? undefined : { ...body, base_version: await version() });
    expect(response.status, JSON.stringify(await response.clone().json())).toBe(status);
    return (await response.json()) as Change;
  };
  const chat = (model: string) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 10 }),
    });
  const modelIds = async () =>
    ((await (await fetch(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Array<{ id: string }> }).data.map((m) => m.id);

  it("adds a provider, a model on it and includes it in a tier, each one version, served at once", async () => {
    const start = await version();
    const provider = await write("POST", "/catalog/providers", { name: "mockai2", entry: { type: "openai", base_url: `${mock.url}/v1`, apis: ["chat"] } }, 201);
    expect(provider).toMatchObject({ object: "catalog.change", op: "create", name: "mockai2", before: null, version: { version: start + 1, reason: "create provider mockai2" } });
    // Keys are not part of the document (ADR 0033): the provider gets its own beside it.
    expect((await admin("POST", "/catalog/provider-keys", { provider: "mockai2", key: "sk-mockai2-key-4242" })).status).toBe(201);
    const model = await write(
      "POST",
      "/catalog/models",
      { name: "vendor/extra-mock", entry: { kind: "chat", provider: "mockai2", upstream_model: "extra-upstream", pricing: { input_per_mtok: "1", output_per_mtok: "2" } } },
      201,
    );
    expect(model.after).toMatchObject({ id: "vendor/extra-mock", provider: "mockai2" });
    expect(await modelIds()).not.toContain("vendor/extra-mock");
    await write("PATCH", "/catalog/tiers/standard", { set: { models: ["gpt-mock", "claude-mock", "vendor/extra-mock"] } });
    expect(await version()).toBe(start + 3);
    expect(await modelIds()).toContain("vendor/extra-mock");
    expect((await chat("vendor/extra-mock")).status).toBe(200);
    expect(mock.requests.at(-1)!.body).toMatchObject({ model: "extra-upstream" });
    const one = (await (await admin("GET", `/catalog/models/${encodeURIComponent("vendor/extra-mock")}`, undefined, readToken)).json()) as { entry: unknown };
    expect(one.entry).toMatchObject({ id: "vendor/extra-mock", upstream_model: "extra-upstream" });
    const list = (await (await admin("GET", "/catalog/providers", undefined, readToken)).json()) as { version: number; data: Array<{ name: string; disabled: boolean }> };
    expect(list.version).toBe(start + 3);
    expect(list.data.map((p) => p.name)).toEqual(["mockai", "mockanthropic", "mockai2"]);
  });

  it("changes a model with PATCH: given fields replace, null removes one", async () => {
    const changed = await write("PATCH", `/catalog/models/${encodeURIComponent("vendor/extra-mock")}`, { set: { upstream_model: null, context_window: 64000 } });
    expect(changed.before).toMatchObject({ upstream_model: "extra-upstream" });
    expect(changed.after).not.toHaveProperty("upstream_model");
    expect(changed.after).toMatchObject({ id: "vendor/extra-mock", context_window: 64000 });
    expect((await chat("vendor/extra-mock")).status).toBe(200);
    expect(mock.requests.at(-1)!.body).toMatchObject({ model: "vendor/extra-mock" });
  });

  it("a disabled model is unlisted and refused as an unknown model, until enabled", async () => {
    await write("POST", `/catalog/models/${encodeURIComponent("vendor/extra-mock")}/disable`);
    expect(await modelIds()).not.toContain("vendor/extra-mock");
    const refused = await chat("vendor/extra-mock");
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as ErrorBody).error.code).toBe("model_not_found");
    const listed = (await (await admin("GET", "/catalog/models")).json()) as { data: Array<{ name: string; disabled: boolean }> };
    expect(listed.data.find((m) => m.name === "vendor/extra-mock")!.disabled).toBe(true);
    await write("POST", `/catalog/models/${encodeURIComponent("vendor/extra-mock")}/enable`);
    expect(await modelIds()).toContain("vendor/extra-mock");
    expect((await chat("vendor/extra-mock")).status).toBe(200);
  });

  it("a routing group skips the deployments of a disabled provider", async () => {
    const group = {
      deployments: [
        { name: "primary", provider: "mockai2", upstream_model: "upstream-gpt" },
        { name: "backup", provider: "mockai", upstream_model: "upstream-gpt" },
      ],
      routing: { strategy: "ordered" },
    };
    const created = await write("POST", "/catalog/routing-groups", { name: "gpt-mock", entry: group }, 201);
    expect(created.after).toEqual(group);
    expect((await chat("gpt-mock")).headers.get("x-gateway-deployment")).toBe("primary");
    await write("POST", "/catalog/providers/mockai2/disable");
    expect((await chat("gpt-mock")).headers.get("x-gateway-deployment")).toBe("backup");
    // A single-provider model on the disabled provider has nothing left to route to.
    expect(await modelIds()).not.toContain("vendor/extra-mock");
    expect((await chat("vendor/extra-mock")).status).toBe(404);
    await write("POST", "/catalog/providers/mockai2/enable");
    expect((await chat("gpt-mock")).headers.get("x-gateway-deployment")).toBe("primary");
  });

  it("refuses a bad change with every error and its field path, a stale base, a taken name or a missing one, and changes nothing", async () => {
    const before = await version();
    const snapshot = await document();
    const bad = await admin("POST", "/catalog/models", {
      name: "broken",
      entry: { kind: "sound", provider: "nowhere", pricing: { input_per_mtok: "abc" }, modalities: { input: [], output: ["text"] } },
      base_version: before,
    });
    expect(bad.status).toBe(400);
    const badBody = (await bad.json()) as ErrorBody;
    expect(badBody.error.type).toBe("invalid_request");
    expect(badBody.error.errors!.map((e) => e.field).sort()).toEqual(["models[4].kind", "models[4].modalities.input"]);
    const unknownProvider = await admin("PATCH", "/catalog/models/premium-mock", { set: { provider: "nowhere", pricing: { input_per_mtok: "-1" } }, base_version: before });
    expect(unknownProvider.status).toBe(400);
    expect(((await unknownProvider.json()) as ErrorBody).error.errors!.map((e) => e.field)).toEqual(["models[2].provider"]);
    const badPrice = await admin("PATCH", "/catalog/models/premium-mock", { set: { pricing: { input_per_mtok: "abc", output_per_mtok: "x" } }, base_version: before });
    expect(((await badPrice.json()) as ErrorBody).error.errors!.map((e) => e.field)).toEqual(["models[2].pricing.input_per_mtok"]);
    const stale = await admin("PATCH", "/catalog/tiers/premium", { set: { models: ["gpt-mock"] }, base_version: before - 1 });
    expect(stale.status).toBe(409);
    expect(stale.headers.get("x-request-id")).toMatch(/^req_/);
    const taken = await admin("POST", "/catalog/providers", { name: "mockai", entry: { type: "openai", base_url: "https://example.com" }, base_version: before });
    expect(taken.status).toBe(409);
    expect(((await taken.json()) as ErrorBody).error.code).toBe("catalog_entry_exists");
    const missing = await admin("POST", "/catalog/providers/nowhere/disable", { base_version: before });
    expect(missing.status).toBe(404);
    const inUse = await admin("DELETE", `/catalog/providers/mockai2?base_version=${before}`);
    expect(inUse.status).toBe(409);
    const inUseBody = (await inUse.json()) as ErrorBody;
    expect(inUseBody.error.code).toBe("catalog_entry_in_use");
    expect(inUseBody.error.errors!.map((e) => e.field)).toEqual(["models[0].deployments[0].provider", "models[3].provider"]);
    const readOnly = await admin("POST", "/catalog/tiers", { name: "x", entry: { models: ["*"] }, base_version: before }, readToken);
    expect(readOnly.status).toBe(403);
    expect(await version()).toBe(before);
    expect(await document()).toEqual(snapshot);
  });

  it("deletes a routing group, a model and a provider once nothing names them", async () => {
    const ungrouped = await write("DELETE", `/catalog/routing-groups/gpt-mock?base_version=${await version()}`);
    expect(ungrouped.after).toBeNull();
    const gpt = (await (await admin("GET", "/catalog/models/gpt-mock")).json()) as { entry: Record<string, unknown> };
    expect(gpt.entry).toMatchObject({ provider: "mockai2", upstream_model: "upstream-gpt" });
    expect(gpt.entry).not.toHaveProperty("deployments");
    await write("PATCH", "/catalog/models/gpt-mock", { set: { provider: "mockai" } });
    const inTier = await admin("DELETE", `/catalog/models/${encodeURIComponent("vendor/extra-mock")}?base_version=${await version()}`);
    expect(((await inTier.json()) as ErrorBody).error.errors!.map((e) => e.field)).toEqual(["tiers.standard.models"]);
    await write("PATCH", "/catalog/tiers/standard", { set: { models: ["gpt-mock", "claude-mock"] } });
    await write("DELETE", `/catalog/models/${encodeURIComponent("vendor/extra-mock")}?base_version=${await version()}`);
    const removed = await write("DELETE", `/catalog/providers/mockai2?base_version=${await version()}`);
    expect(removed.before).toMatchObject({ type: "openai" });
    expect(Object.keys(((await document()) as { providers: object }).providers)).toEqual(["mockai", "mockanthropic"]);
    expect((await chat("gpt-mock")).status).toBe(200);
  });

  it("audits every change with the entry before and after", async () => {
    const audit = (await (await admin("GET", "/audit?target_type=catalog&limit=100")).json()) as {
      data: Array<{
        action: string;
        target: { id: string };
        before: { version: number; entry: unknown } | null;
        after: { version: number; entry: unknown } | null;
        actor: { type: string };
      }>;
    };
    const actions = audit.data.map((row) => `${row.action} ${row.target.id}`).reverse();
    expect(actions).toEqual([
      "catalog.seed 1",
      "catalog.provider.create provider:mockai2",
      "catalog.model.create model:vendor/extra-mock",
      "catalog.tier.update tier:standard",
      "catalog.model.update model:vendor/extra-mock",
      "catalog.model.disable model:vendor/extra-mock",
      "catalog.model.enable model:vendor/extra-mock",
      "catalog.routing_group.create routing_group:gpt-mock",
      "catalog.provider.disable provider:mockai2",
      "catalog.provider.enable provider:mockai2",
      "catalog.routing_group.delete routing_group:gpt-mock",
      "catalog.model.update model:gpt-mock",
      "catalog.tier.update tier:standard",
      "catalog.model.delete model:vendor/extra-mock",
      "catalog.provider.delete provider:mockai2",
    ]);
    const disable = audit.data.find((row) => row.action === "catalog.provider.disable")!;
    expect(disable.before!.entry).not.toHaveProperty("disabled");
    expect(disable.after!.entry).toMatchObject({ disabled: true });
    expect(disable.after!.version).toBe(disable.before!.version + 1);
    const tier = audit.data.find((row) => row.action === "catalog.tier.update")!;
    expect(tier.before!.entry).toEqual({ models: ["gpt-mock", "claude-mock", "vendor/extra-mock"] });
    expect(tier.after!.entry).toEqual({ models: ["gpt-mock", "claude-mock"] });
    expect(audit.data[0]!.actor.type).toBe("admin_token");
  });
});
