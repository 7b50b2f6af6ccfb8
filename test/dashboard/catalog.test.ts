// /dashboard/api/admin/catalog: the Catalog page's routes (docs/dashboard.md, "Catalog") on a gateway
// with catalog.source: database. A person who is not an administrator is refused; an administrator
// reads the catalog, its versions and a diff, rolls back and manages the providers' shared keys,
// every write with the CSRF token and audited as the dashboard account. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { expectError, signedInAccount, type DashboardClient } from "./support.js";

describe.each(DATABASE_KINDS)("the dashboard's catalog routes on %s", (kind) => {
  let gateway: TestGateway;
  let admin: { client: DashboardClient; account: { id: string; email: string } };
  let person: { client: DashboardClient };

  beforeAll(async () => {
    gateway = await startGateway(mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: "catalog: { source: database }" }), { kind });
    admin = await signedInAccount(gateway, { admin: true });
    person = await signedInAccount(gateway);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const auditRows = async (action: string) => (await gateway.app.ctx.store.audit.list({ limit: 50, action })).filter((e) => e.actor.type === "dashboard");

  it("refuses a person who is not an administrator, reads and writes alike", async () => {
    const keysBefore = (await gateway.app.ctx.catalog.providerKeys()).length;
    expectError(await person.client.get("/admin/catalog"), 403, "forbidden");
    expectError(await person.client.get("/admin/catalog/versions"), 403, "forbidden");
    expectError(await person.client.get("/admin/catalog/diff?from=1"), 403, "forbidden");
    expectError(await person.client.post("/admin/catalog/rollback", { version: 1 }), 403, "forbidden");
    expectError(await person.client.post("/admin/catalog/provider-keys", { provider: "mockai", key: "sk-not-an-admin-key-1234" }), 403, "forbidden");
    expect(await gateway.app.ctx.catalog.providerKeys()).toHaveLength(keysBefore);
    expect((await gateway.app.ctx.catalog.versions(10)).map((v) => v.version)).toEqual([1]);
  });

  it("shows an administrator the catalog, its versions and what changed, and rolls back", async () => {
    const first = await admin.client.get("/admin/catalog");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: "catalog", source: "database", read_only: false, version: 1 });
    expect(first.body.document.models.map((m: { id: string }) => m.id)).toContain("gpt-mock");
    expect(first.body.provider_keys.map((k: { provider: string }) => k.provider)).toContain("mockai");
    expect(JSON.stringify(first.body.provider_keys)).not.toContain("sk-");

    // A change made elsewhere (the admin API, the CLI): a price of gpt-mock.
    const document = structuredClone(first.body.document);
    document.models = document.models.map((m: { id: string }) => (m.id === "gpt-mock" ? { ...m, pricing: { input_per_mtok: "7.00", output_per_mtok: "9.00" } } : m));
    const actor = { type: "cli" as const, id: null, name: "test", clientAddress: null, requestId: null };
    expect((await gateway.app.ctx.catalog.replace(actor, document, 1)).version).toBe(2);

    const versions = await admin.client.get("/admin/catalog/versions?limit=10");
    expect(versions.status).toBe(200);
    expect(versions.body.data.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    const one = await admin.client.get("/admin/catalog/versions/1");
    expect(one.status).toBe(200);
    expect(one.body.version).toBe(1);
    expectError(await admin.client.get("/admin/catalog/versions/99"), 404, "not_found");
    const diff = await admin.client.get("/admin/catalog/diff?from=1");
    expect(diff.status).toBe(200);
    expect(diff.body).toMatchObject({ object: "catalog.diff", from: 1, to: 2 });
    expect(Object.keys(diff.body.changes.models.changed)).toEqual(["gpt-mock"]);
    expectError(await admin.client.get("/admin/catalog/diff?from=nope"), 400, "invalid_request");

    // The rollback needs the CSRF token, like every dashboard write.
    const withoutToken = await admin.client.request("POST", "/dashboard/api/admin/catalog/rollback", { version: 1 }, { csrf: null });
    expect(withoutToken.status).toBe(403);
    expect(withoutToken.body.error.code).toBe("csrf_failed");
    const rolledBack = await admin.client.post("/admin/catalog/rollback", { version: 1 });
    expect(rolledBack.status).toBe(201);
    expect(rolledBack.body).toMatchObject({ version: 3, reason: "rollback to 1" });
    const now = await admin.client.get("/admin/catalog");
    expect(now.body.version).toBe(3);
    expect(now.body.document).toEqual(first.body.document);
    const [row] = await auditRows("catalog.rollback");
    expect(row?.actor).toEqual({ type: "dashboard", id: admin.account.id, name: admin.account.email });
  });

  it("lets an administrator add, disable, enable and remove a provider's shared key", async () => {
    const refused = await admin.client.request("POST", "/dashboard/api/admin/catalog/provider-keys", { provider: "mockai", key: "sk-console-added-key-9876" }, { csrf: null });
    expect(refused.status).toBe(403);
    expectError(await admin.client.post("/admin/catalog/provider-keys", { provider: "nobody", key: "sk-console-added-key-9876" }), 404, "not_found");
    expectError(await admin.client.post("/admin/catalog/provider-keys", { provider: "mockai", key: "short" }), 400, "invalid_request");
    expectError(await admin.client.post("/admin/catalog/provider-keys", { provider: "mockai", key: "sk-console-added-key-9876", label: "nul\u0000label" }), 400, "invalid_request");
    expectError(await admin.client.post("/admin/catalog/provider-keys", { provider: "mockai", key: "sk-console-added-key-9876", label: "x".repeat(101) }), 400, "invalid_request");
    const added = await admin.client.post("/admin/catalog/provider-keys", { provider: "mockai", key: "sk-console-added-key-9876", label: "console" });
    expect(added.status).toBe(201);
    expect(added.body.provider_key).toMatchObject({ provider: "mockai", label: "console", last4: "9876", status: "active" });
    expect(added.text).not.toContain("sk-console-added-key");
    const id: string = added.body.provider_key.id;

    const disabled = await admin.client.patch(`/admin/catalog/provider-keys/${id}`, { status: "disabled" });
    expect(disabled.status).toBe(200);
    expect(disabled.body.provider_key.status).toBe("disabled");
    expectError(await admin.client.patch(`/admin/catalog/provider-keys/${id}`, { status: "gone" }), 400, "invalid_request");
    expect((await admin.client.patch(`/admin/catalog/provider-keys/${id}`, { status: "active" })).body.provider_key.status).toBe("active");
    const listed = await admin.client.get("/admin/catalog");
    expect(listed.body.provider_keys.map((k: { id: string }) => k.id)).toContain(id);

    const removed = await admin.client.delete(`/admin/catalog/provider-keys/${id}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ deleted: true, provider_key: { id } });
    expect((await admin.client.get("/admin/catalog")).body.provider_keys.map((k: { id: string }) => k.id)).not.toContain(id);

    for (const action of ["catalog.provider_key.add", "catalog.provider_key.disable", "catalog.provider_key.enable", "catalog.provider_key.remove"]) {
      const rows = (await auditRows(action)).filter((e) => e.targetId === id);
      expect(rows, action).toHaveLength(1);
      expect(rows[0]!.actor).toEqual({ type: "dashboard", id: admin.account.id, name: admin.account.email });
    }
  });
});
