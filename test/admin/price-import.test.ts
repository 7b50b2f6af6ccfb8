// Bulk price import (issue 40, item 5): the preview lists every change old -> new and every problem
// at once and changes nothing; a file with any problem is refused whole; an apply is ONE new catalog
// version, audited as catalog.price_import, and served; the dashboard's route is the same operation;
// with catalog.source: file it is refused. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { expectError, signedInAccount } from "../dashboard/support.js";

interface ImportAnswer {
  dry_run: boolean;
  base_version: number;
  changes: Array<{ model: string; price: string; before: string | null; after: string }>;
  errors: Array<{ row: number; model: string | null; field: string; message: string }>;
  version: { version: number; reason: string } | null;
}

describe.each(DATABASE_KINDS)("bulk price import, on %s", (kind) => {
  let mock: MockUpstream;
  let database: TestDatabase;
  let gateway: TestGateway;
  let token: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createTestDatabase(kind);
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: "catalog: { source: database }" }), { database });
    token = (await gateway.app.ctx.store.adminTokens.create({ name: "prices", scopes: ADMIN_SCOPES })).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await database?.drop();
    await mock?.close();
  });

  const post = (path: string, body: unknown, auth = `Bearer ${token}`) =>
    fetch(`${gateway.url}${path}`, { method: "POST", headers: { authorization: auth, "content-type": "application/json" }, body: JSON.stringify(body) });
  const latestVersion = async () => (await gateway.app.ctx.store.catalog.latest())!.version;
  const modelPricing = async (id: string) => {
    const latest = await gateway.app.ctx.store.catalog.latest();
    return (JSON.parse(latest!.document) as { models: Array<{ id: string; pricing: Record<string, unknown> }> }).models.find((m) => m.id === id)!.pricing;
  };

  const csv = ["model,input_per_mtok,output_per_mtok,per_request", 'gpt-mock,"1.25",2.00,', "claude-mock,3.00,,0.001"].join("\r\n");

  it("previews every change old -> new per model and price, and changes nothing", async () => {
    const before = await latestVersion();
    const response = await post("/admin/v1/catalog/price-import", { format: "csv", content: csv, base_version: before, dry_run: true });
    expect(response.status).toBe(200);
    const answer = (await response.json()) as ImportAnswer;
    expect(answer).toMatchObject({ dry_run: true, base_version: before, errors: [], version: null });
    // gpt-mock's output stays 2.00 (an equal amount is no change) and claude-mock's input 3.00.
    expect(answer.changes).toEqual([
      { model: "gpt-mock", price: "input_per_mtok", before: "1.00", after: "1.25" },
      { model: "claude-mock", price: "per_request", before: null, after: "0.001" },
    ]);
    expect(await latestVersion()).toBe(before);
    expect((await modelPricing("gpt-mock")).input_per_mtok).toBe("1.00");
  });

  it("lists every problem at once, and an apply of such a file changes nothing", async () => {
    const bad = [
      { model: "gpt-mock", input_per_mtok: "-1" },
      { model: "no-such-model", input_per_mtok: "1" },
      { model: "claude-mock", output_per_mtok: "1.0000000001", inputs_per_mtok: "2" },
      { model: "gpt-mock", output_per_mtok: "3" },
    ];
    const content = JSON.stringify(bad);
    const before = await latestVersion();
    const preview = (await (await post("/admin/v1/catalog/price-import", { format: "json", content, base_version: before, dry_run: true })).json()) as ImportAnswer;
    expect(preview.errors.map((e) => [e.row, e.model, e.field])).toEqual([
      [1, "gpt-mock", "input_per_mtok"],
      [2, "no-such-model", "model"],
      [3, "claude-mock", "output_per_mtok"],
      [3, "claude-mock", "inputs_per_mtok"],
      [4, "gpt-mock", "model"],
    ]);
    const applied = await post("/admin/v1/catalog/price-import", { format: "json", content, base_version: before });
    expect(applied.status).toBe(400);
    const error = ((await applied.json()) as { error: { type: string; errors: Array<{ field: string }> } }).error;
    expect(error.errors).toHaveLength(5);
    expect(error.errors[0]!.field).toBe("rows[1].input_per_mtok");
    expect(await latestVersion()).toBe(before);
    expect((await modelPricing("claude-mock")).output_per_mtok).toBe("15.00");
  });

  it("applies a valid file as ONE new version, audited, and served", async () => {
    const before = await latestVersion();
    const response = await post("/admin/v1/catalog/price-import", { format: "csv", content: csv, base_version: before });
    expect(response.status).toBe(201);
    const answer = (await response.json()) as ImportAnswer;
    expect(answer.version).toMatchObject({ version: before + 1, reason: "price import" });
    expect(answer.changes).toHaveLength(2);
    expect(await latestVersion()).toBe(before + 1);
    expect(await modelPricing("gpt-mock")).toMatchObject({ input_per_mtok: "1.25", output_per_mtok: "2.00" });
    expect(await modelPricing("claude-mock")).toMatchObject({ input_per_mtok: "3.00", per_request: "0.001" });
    expect(gateway.app.ctx.config.models.get("gpt-mock")!.pricing.inputPerMtok).toBe(1_250_000_000n);
    const audit = (await (await fetch(`${gateway.url}/admin/v1/audit?target_type=catalog`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      data: Array<{ action: string; before: Record<string, unknown>; after: Record<string, unknown> }>;
    };
    expect(audit.data[0]!.action).toBe("catalog.price_import");
    expect(audit.data[0]!.before).toMatchObject({ version: before, models: { "gpt-mock": { pricing: { input_per_mtok: "1.00" } } } });
    expect(audit.data[0]!.after).toMatchObject({ version: before + 1, models: { "gpt-mock": { pricing: { input_per_mtok: "1.25" } } } });
    // The same file again changes nothing and is refused; a file made from an older version is a conflict.
    expect((await post("/admin/v1/catalog/price-import", { format: "csv", content: csv, base_version: before + 1 })).status).toBe(400);
    const stale = await post("/admin/v1/catalog/price-import", { format: "json", content: '[{"model":"gpt-mock","input_per_mtok":9}]', base_version: before });
    expect(stale.status).toBe(409);
    expect(await latestVersion()).toBe(before + 1);
  });

  it("needs catalog:write, and the dashboard's route is the same operation for an administrator", async () => {
    const reader = (await gateway.app.ctx.store.adminTokens.create({ name: "reader", scopes: ["catalog:read"] })).raw;
    const refused = await post("/admin/v1/catalog/price-import", { format: "csv", content: csv, base_version: 1, dry_run: true }, `Bearer ${reader}`);
    expect(refused.status).toBe(403);
    // A file may hold line breaks and tabs, never another control character.
    const nul = await post("/admin/v1/catalog/price-import", { format: "csv", content: "model,input_per_mtok\ngpt-mock,\u00001", base_version: 1, dry_run: true });
    expect(nul.status).toBe(400);
    expect(((await nul.json()) as { error: { param: string } }).error.param).toBe("content");
    const { client } = await signedInAccount(gateway, { admin: true });
    const person = await signedInAccount(gateway);
    const latest = await latestVersion();
    const body = { format: "json", content: '[{"model":"premium-mock","output_per_mtok":"31"}]', base_version: latest };
    expectError(await person.client.post("/admin/catalog/price-import", body), 403, "forbidden");
    const response = await client.post("/admin/catalog/price-import", body);
    expect(response.status).toBe(201);
    expect((response.body as ImportAnswer).changes).toEqual([{ model: "premium-mock", price: "output_per_mtok", before: "30", after: "31" }]);
    expect(await latestVersion()).toBe(latest + 1);
  });
});

describe("bulk price import with catalog.source: file", () => {
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

  it("is refused with 409 catalog_read_only, previews included", async () => {
    const token = (await gateway.app.ctx.store.adminTokens.create({ name: "prices", scopes: ADMIN_SCOPES })).raw;
    for (const dryRun of [true, false]) {
      const response = await fetch(`${gateway.url}/admin/v1/catalog/price-import`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ format: "csv", content: "model,input_per_mtok\ngpt-mock,2", base_version: 1, dry_run: dryRun }),
      });
      expect(response.status).toBe(409);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("catalog_read_only");
    }
  });
});
