// Redemption codes through the dashboard and the admin API, on both databases: an administrator mints
// (the texts shown once), lists and revokes codes, audited; a signed-in account redeems one and sees
// the credit in its balance and ledger; failures carry their reason and are throttled like sign-in;
// non-administrators and tokens without the scope are refused.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { expectError, signedInAccount, type ApiResponse, type DashboardClient } from "./support.js";

describe.each(DATABASE_KINDS)("redemption codes in the dashboard and admin API on %s", (kind) => {
  let gateway: TestGateway;
  let admin: { client: DashboardClient; account: { id: string } };
  let configDir: string;

  beforeAll(async () => {
    const config = mockConfig({ openaiUrl: "http://127.0.0.1:9" });
    gateway = await startGateway(config, { kind });
    admin = await signedInAccount(gateway, { admin: true });
    configDir = mkdtempSync(join(tmpdir(), "gw-codes-"));
    writeFileSync(join(configDir, "gateway.config.yaml"), config);
  });
  afterAll(async () => {
    await gateway?.close();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  async function cli(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = "";
    let stderr = "";
    const code = await runCli(argv, {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      env: { ...gateway.database.env, GATEWAY_CONFIG: join(configDir, "gateway.config.yaml") },
      cwd: configDir,
    });
    return { code, stdout, stderr };
  }

  async function adminApi(token: string, method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${gateway.url}/admin/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null, text };
  }

  it("an administrator mints codes; a user redeems one and sees the balance and the ledger row", async () => {
    const minted = await admin.client.post("/admin/codes", { value_usd: "15", count: 2, batch: `launch-${kind}`, note: "launch promo", expires_in_days: 30 });
    expect(minted.status, minted.text).toBe(201);
    expect(minted.body.data).toHaveLength(2);
    const [first, second] = minted.body.data;
    expect(first).toMatchObject({ value_usd: "15.00", batch: `launch-${kind}`, note: "launch promo", state: "unused" });
    expect(first.code).toMatch(/^MGW(-[0-9A-Z]{5}){5}$/);
    // Lists never show a code's text again.
    const listed = await admin.client.get(`/admin/codes?batch=launch-${kind}`);
    expect(listed.body.data.map((c: { id: string }) => c.id).sort()).toEqual([first.id, second.id].sort());
    expect(listed.text).not.toContain(first.code.slice(10));

    const user = await signedInAccount(gateway, { balance: "1" });
    const redeemed = await user.client.post("/redeem", { code: first.code.toLowerCase() });
    expect(redeemed.status, redeemed.text).toBe(200);
    expect(redeemed.body).toMatchObject({ credited_usd: "15.00", account: { balance_usd: "16.00" } });
    expect((await user.client.get("/usage")).body.balance.balance_usd).toBe("16.00");
    const ledger = (await user.client.get("/ledger")).body.data;
    expect(ledger[0]).toMatchObject({ kind: "credit", cost_usd: "15.00" });
    expect(ledger[0].note).toContain(first.id);

    const again = await user.client.post("/redeem", { code: first.code });
    expectError(again, 400, "code_not_redeemable");
    expect(again.body.error.code).toBe("code_used");
    expect((await admin.client.get(`/admin/codes?batch=launch-${kind}&state=used`)).body.data).toMatchObject([{ id: first.id, used_by: user.account.id }]);

    // Revoke: the unused code is revoked and refused; the used one cannot be revoked.
    const revoked = await admin.client.post(`/admin/codes/${second.id}/revoke`);
    expect(revoked.body.code.state).toBe("revoked");
    expect((await user.client.post("/redeem", { code: second.code })).body.error.code).toBe("code_revoked");
    expectError(await admin.client.post(`/admin/codes/${first.id}/revoke`), 409, "invalid_state");
    expectError(await admin.client.post("/admin/codes/code_missing/revoke"), 404, "not_found");
    const audit = (await admin.client.get(`/admin/audit?target_id=${second.id}`)).body.data;
    expect(audit.map((row: { action: string }) => row.action)).toEqual(["code.revoke", "code.mint"]);
    expect(JSON.stringify(audit)).not.toContain(second.code.slice(10));
  });

  it("rejects bad mint requests and non-administrators", async () => {
    expectError(await admin.client.post("/admin/codes", { value_usd: "0" }), 400, "invalid_request");
    expectError(await admin.client.post("/admin/codes", { value_usd: "1000000.01" }), 400, "invalid_request");
    expectError(await admin.client.post("/admin/codes", { value_usd: "1", count: 501 }), 400, "invalid_request");
    expectError(await admin.client.post("/admin/codes", { value_usd: "1", expires_at: "2001-01-01T00:00:00Z" }), 400, "invalid_request");
    expectError(await admin.client.post("/admin/codes", { value_usd: "1", batch: "x".repeat(101) }), 400, "invalid_request");
    expectError(await admin.client.post("/admin/codes", { value_usd: "1", surprise: true }), 400, "invalid_request");
    const user = await signedInAccount(gateway);
    expectError(await user.client.get("/admin/codes"), 403, "forbidden");
    expectError(await user.client.post("/admin/codes", { value_usd: "5" }), 403, "forbidden");
    expectError(await user.client.post("/admin/codes/code_x/revoke"), 403, "forbidden");
    expectError(await user.client.post("/redeem", { code: "x".repeat(81) }), 400, "invalid_request");
  });

  it("throttles failed redemptions like sign-in: the sixth failure in 15 minutes gets 429", async () => {
    const user = await signedInAccount(gateway);
    for (let i = 0; i < 5; i++) {
      const failed = await user.client.post("/redeem", { code: "MGW-00000-00000-00000-00000-00000" });
      expectError(failed, 400, "code_not_redeemable");
      expect(failed.body.error.code).toBe("code_unknown");
    }
    const { raw } = { raw: (await admin.client.post("/admin/codes", { value_usd: "1" })).body.data[0].code as string };
    const throttled = await user.client.post("/redeem", { code: raw });
    expectError(throttled, 429, "rate_limit_error");
    expect(throttled.body.error.code).toBe("redeem_throttled");
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another account from the same address is not throttled by this one's failures.
    const other = await signedInAccount(gateway);
    expect((await other.client.post("/redeem", { code: raw })).status).toBe(200);
  });

  it("the admin API mints with credits:write, lists with credits:read, revokes, audited", async () => {
    const store = gateway.app.ctx.store;
    const writer = (await store.adminTokens.create({ name: "codes-writer", scopes: ["credits:write"] })).raw;
    const reader = (await store.adminTokens.create({ name: "codes-reader", scopes: ["credits:read"] })).raw;
    const minted = await adminApi(writer, "POST", "/codes", { value_usd: "2.50", count: 3, batch: `api-${kind}`, expires_at: new Date(Date.now() + 86_400_000).toISOString() });
    expect(minted.status, minted.text).toBe(201);
    expect(minted.body.data).toHaveLength(3);
    expectError(await adminApi(reader, "POST", "/codes", { value_usd: "1" }), 403, "forbidden");
    expectError(await adminApi(writer, "GET", "/codes"), 403, "forbidden");
    const page1 = await adminApi(reader, "GET", `/codes?batch=api-${kind}&limit=2`);
    expect(page1.body.data).toHaveLength(2);
    expect(page1.body.has_more).toBe(true);
    const page2 = await adminApi(reader, "GET", `/codes?batch=api-${kind}&limit=2&cursor=${page1.body.next_cursor}`);
    expect([...page1.body.data, ...page2.body.data].map((c: { id: string }) => c.id).sort()).toEqual(minted.body.data.map((c: { id: string }) => c.id).sort());
    const revoked = await adminApi(writer, "POST", `/codes/${minted.body.data[0].id}/revoke`);
    expect(revoked.body.code.state).toBe("revoked");
    const audit = await store.audit.list({ targetId: minted.body.data[0].id, limit: 10 });
    expect(audit.map((e) => [e.action, e.actor.name])).toEqual([
      ["code.revoke", "codes-writer"],
      ["code.mint", "codes-writer"],
    ]);
  });

  it("the CLI mints, lists and revokes codes", async () => {
    const minted = await cli(["admin", "codes", "mint", "--value", "4", "--count", "2", "--batch", `cli-${kind}`, "--note", "from the cli", "--json"]);
    expect(minted.code, minted.stderr).toBe(0);
    const codes = JSON.parse(minted.stdout) as Array<{ id: string; code: string; value_usd: string }>;
    expect(codes.map((c) => c.value_usd)).toEqual(["4.00", "4.00"]);
    const user = await signedInAccount(gateway, { balance: "0" });
    expect((await user.client.post("/redeem", { code: codes[0]!.code })).body.credited_usd).toBe("4.00");
    expect((await cli(["admin", "codes", "revoke", codes[1]!.id])).code).toBe(0);
    const listed = JSON.parse((await cli(["admin", "codes", "list", "--batch", `cli-${kind}`, "--json"])).stdout) as Array<{ id: string; state: string }>;
    expect(Object.fromEntries(listed.map((c) => [c.id, c.state]))).toEqual({ [codes[0]!.id]: "used", [codes[1]!.id]: "revoked" });
    const bad = await cli(["admin", "codes", "mint", "--value", "0"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("invalid_request");
    expect((await cli(["admin", "codes", "mint"])).code).toBe(2);
  });
});
