// Sub-key lifecycle through the dashboard API: every key row of the contract's state tables (docs/api-contract.md), the show-again
// window, caps, the 50-key limit, and cross-account isolation. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_ENABLED_KEYS_PER_ACCOUNT } from "../../src/store/keys-store.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { expectError, signedInAccount, type DashboardClient } from "./support.js";

describe.each(DATABASE_KINDS)("dashboard keys on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let client: DashboardClient;
  let accountId: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => json(res, 200, chatCompletion("hi"));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind });
    ({
      client,
      account: { id: accountId },
    } = await signedInAccount(gateway));
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  const createKey = async (body: object = { name: "k" }) => {
    const response = await client.post("/keys", body);
    expect(response.status, response.text).toBe(201);
    return response.body as { key: { id: string; status: string }; raw_key: string; show_again: { token: string; expires_at: string } };
  };
  const chat = (raw: string) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
    });
  const db = () => gateway.app.ctx.store.db;
  const snapshot = async (keyId: string) => ({
    key: await db().selectFrom("keys").selectAll().where("id", "=", keyId).executeTakeFirst(),
    allocations: await db().selectFrom("key_allocations").selectAll().where("key_id", "=", keyId).orderBy("id").execute(),
    account: await db().selectFrom("accounts").select(["balance_nano", "total_spent_nano"]).where("id", "=", accountId).executeTakeFirst(),
    ledger: await db().selectFrom("ledger").selectAll().where("account_id", "=", accountId).orderBy("id").execute(),
  });

  it("limits: set at creation and by PATCH (null removes them), applied at once, shown with each window's use", async () => {
    const created = await createKey({ name: "limited", limits: { requests_per_minute: 2 } });
    expect(created.key).toMatchObject({ limits: { requests_per_minute: 2 } });
    expect((await chat(created.raw_key)).headers.get("x-ratelimit-remaining-requests")).toBe("1");
    const read = await client.get(`/keys/${created.key.id}`);
    expect(read.body.traffic).toEqual([expect.objectContaining({ subject: "key", model: null, requests_per_minute: 2, requests: 1, in_flight: 0 })]);

    const patched = await client.patch(`/keys/${created.key.id}`, { limits: { requests_per_minute: 10, models: { "gpt-mock": { concurrent_requests: 1 } } } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.key.limits).toEqual({ requests_per_minute: 10, models: { "gpt-mock": { concurrent_requests: 1 } } });
    // This process dropped the key from its cache: the new limit counts on the same window.
    expect((await chat(created.raw_key)).headers.get("x-ratelimit-remaining-requests")).toBe("8");
    expect((await client.get(`/keys/${created.key.id}`)).body.traffic).toEqual([
      expect.objectContaining({ subject: "key", model: null, requests_per_minute: 10, requests: 2 }),
      expect.objectContaining({ subject: "key", model: "gpt-mock", concurrent_requests: 1, requests: 1, in_flight: 0 }),
    ]);
    expectError(await client.patch(`/keys/${created.key.id}`, { limits: { requests_per_minute: -1 } }), 400, "invalid_request");
    const removed = await client.patch(`/keys/${created.key.id}`, { limits: null });
    expect(removed.body.key.limits).toBeNull();
    const unlimited = await chat(created.raw_key);
    expect(unlimited.headers.get("x-ratelimit-limit-requests")).toBeNull();
  });

  it("creates a key with caps, shows the raw key once and lists it without the secret", async () => {
    const created = await createKey({ name: "caps", budget_cap_usd: "2.50", token_cap: 100000 });
    expect(created.raw_key).toMatch(/^mgw_/);
    expect(created.key).toMatchObject({ name: "caps", status: "enabled", budget_cap_usd: "2.50", token_cap: 100000 });
    expect(Date.parse(created.show_again.expires_at) - Date.now()).toBeGreaterThan(4 * 60_000);
    const list = await client.get("/keys");
    expect(list.status).toBe(200);
    expect(list.headers.get("cache-control")).toBe("no-store");
    expect(list.text).not.toContain(created.raw_key);
    expect(list.body.data.map((k: { id: string }) => k.id)).toContain(created.key.id);
    const read = await client.get(`/keys/${created.key.id}`);
    expect(read.body.key).toMatchObject({ id: created.key.id, spent_usd: "0.00", tokens_used: 0 });
    expect((await chat(created.raw_key)).status).toBe(200);
  });

  it("shows a key again within the window; expired, unknown or mismatched tokens get 410 key_show_expired", async () => {
    const a = await createKey();
    const b = await createKey();
    const again = await client.post(`/keys/${a.key.id}/show-again`, { token: a.show_again.token });
    expect(again.status).toBe(200);
    expect(again.body.raw_key).toBe(a.raw_key);
    expectError(await client.post(`/keys/${a.key.id}/show-again`, { token: "unknown-token" }), 410, "key_show_expired");
    expectError(await client.post(`/keys/${b.key.id}/show-again`, { token: a.show_again.token }), 410, "key_show_expired");
    const other = await signedInAccount(gateway);
    expectError(await other.client.post(`/keys/${a.key.id}/show-again`, { token: a.show_again.token }), 410, "key_show_expired");
    // Expire the window in the database rather than waiting five minutes.
    await db()
      .updateTable("show_again_tokens")
      .set({ expires_at: BigInt(Date.now() - 1) })
      .where("key_id", "=", a.key.id)
      .execute();
    expectError(await client.post(`/keys/${a.key.id}/show-again`, { token: a.show_again.token }), 410, "key_show_expired");
  });

  it("enabled -> revoked with confirm=true, refused on the gateway at once; revoking again is a no-op", async () => {
    const created = await createKey();
    expect((await chat(created.raw_key)).status).toBe(200); // now cached by the auth cache
    const revoked = await client.delete(`/keys/${created.key.id}?confirm=true`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.key.status).toBe("revoked");
    const refused = await chat(created.raw_key);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe("auth_error");
    expect((await client.delete(`/keys/${created.key.id}?confirm=true`)).body.key.status).toBe("revoked");
    expectError(await client.post(`/keys/${created.key.id}/show-again`, { token: created.show_again.token }), 410, "key_show_expired");
  });

  it("exhausted -> revoked with confirm=true", async () => {
    const created = await createKey();
    const exhausted = await client.patch(`/keys/${created.key.id}`, { budget_cap_usd: "0" });
    expect(exhausted.body.key.status).toBe("exhausted");
    const revoked = await client.delete(`/keys/${created.key.id}?confirm=true`);
    expect(revoked.body.key.status).toBe("revoked");
  });

  it("revoked + permanent=true removes the row; allocations and ledger rows stay", async () => {
    const created = await createKey();
    expect((await chat(created.raw_key)).status).toBe(200);
    await client.delete(`/keys/${created.key.id}?confirm=true`);
    const before = await snapshot(created.key.id);
    const deleted = await client.delete(`/keys/${created.key.id}?confirm=true&permanent=true`);
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({ id: created.key.id, deleted: true });
    const after = await snapshot(created.key.id);
    expect(after.key).toBeUndefined();
    expect(after.allocations).toEqual(before.allocations);
    expect(after.ledger).toEqual(before.ledger);
    expectError(await client.get(`/keys/${created.key.id}`), 404, "not_found");
    expect((await chat(created.raw_key)).status).toBe(401);
  });

  it.each(["enabled", "exhausted"])("%s + permanent=true is 409 invalid_state and changes nothing", async (state) => {
    const created = await createKey({ name: state, budget_cap_usd: "1" });
    expect((await chat(created.raw_key)).status).toBe(200);
    if (state === "exhausted") await client.patch(`/keys/${created.key.id}`, { budget_cap_usd: "0" });
    const before = await snapshot(created.key.id);
    expect(before.key?.status).toBe(state);
    expectError(await client.delete(`/keys/${created.key.id}?confirm=true&permanent=true`), 409, "invalid_state");
    expect(await snapshot(created.key.id)).toEqual(before);
  });

  it("without confirm=true: 400 invalid_request, nothing changes", async () => {
    const created = await createKey();
    for (const query of ["", "?confirm=false", "?permanent=true", "?confirm=yes&permanent=true"]) {
      const response = await client.delete(`/keys/${created.key.id}${query}`);
      expectError(response, 400, "invalid_request");
      expect(response.body.error.param).toBe("confirm");
    }
    expect((await client.get(`/keys/${created.key.id}`)).body.key.status).toBe("enabled");
  });

  it("enable: revoked and exhausted get 409 conflict; enabled stays enabled (200, no-op)", async () => {
    const revoked = await createKey();
    await client.delete(`/keys/${revoked.key.id}?confirm=true`);
    expectError(await client.post(`/keys/${revoked.key.id}/enable`), 409, "conflict");
    expect((await client.get(`/keys/${revoked.key.id}`)).body.key.status).toBe("revoked");

    const exhausted = await createKey();
    await client.patch(`/keys/${exhausted.key.id}`, { token_cap: 0 });
    expectError(await client.post(`/keys/${exhausted.key.id}/enable`), 409, "conflict");
    expect((await client.get(`/keys/${exhausted.key.id}`)).body.key.status).toBe("exhausted");
    // Raising the caps is how an exhausted key regains capacity.
    expect((await client.patch(`/keys/${exhausted.key.id}`, { token_cap: null })).body.key.status).toBe("enabled");

    const enabled = await createKey();
    const response = await client.post(`/keys/${enabled.key.id}/enable`);
    expect(response.status).toBe(200);
    expect(response.body.key.status).toBe("enabled");
  });

  it("records each caps change in key_allocations; a revoked key's caps are invalid_state; bad caps are invalid_request", async () => {
    const created = await createKey({ budget_cap_usd: "1" });
    await client.patch(`/keys/${created.key.id}`, { budget_cap_usd: "3", token_cap: 500 });
    await client.patch(`/keys/${created.key.id}`, { budget_cap_usd: null });
    const rows = await db()
      .selectFrom("key_allocations")
      .select(["reason", "budget_cap_nano", "token_cap", "actor_account_id"])
      .where("key_id", "=", created.key.id)
      .orderBy("id")
      .execute();
    expect(rows.map((r) => r.reason)).toEqual(["created", "caps_changed", "caps_changed"]);
    expect(rows[1]).toMatchObject({ budget_cap_nano: 3_000_000_000n, token_cap: 500n, actor_account_id: accountId });
    expect(rows[2]!.budget_cap_nano).toBeNull();
    expectError(await client.patch(`/keys/${created.key.id}`, { budget_cap_usd: "-1" }), 400, "invalid_request");
    expectError(await client.patch(`/keys/${created.key.id}`, {}), 400, "invalid_request");
    expectError(await client.post("/keys", { token_cap: 1.5 }), 400, "invalid_request");
    await client.delete(`/keys/${created.key.id}?confirm=true`);
    expectError(await client.patch(`/keys/${created.key.id}`, { token_cap: 5 }), 409, "invalid_state");
  });

  it("clamp_output: on by default, set at creation and by PATCH, shown in the key view and by GET /v1/me", async () => {
    const plain = await createKey();
    expect((plain.key as { clamp_output?: boolean }).clamp_output).toBe(true);
    const off = await createKey({ name: "strict", clamp_output: false });
    expect((off.key as { clamp_output?: boolean }).clamp_output).toBe(false);
    const me = async (raw: string) =>
      (await (await fetch(`${gateway.url}/v1/me`, { headers: { authorization: `Bearer ${raw}` } })).json()) as { clamp_output: boolean; key: { clamp_output: boolean } };
    expect(await me(off.raw_key)).toMatchObject({ clamp_output: false, key: { clamp_output: false } });
    const patched = await client.patch(`/keys/${off.key.id}`, { clamp_output: true });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.key.clamp_output).toBe(true);
    expect(await me(off.raw_key)).toMatchObject({ clamp_output: true, key: { clamp_output: true } });
    // Caps and the setting in one change; a bad value changes nothing.
    const both = await client.patch(`/keys/${off.key.id}`, { token_cap: 1000, clamp_output: false });
    expect(both.body.key).toMatchObject({ token_cap: 1000, clamp_output: false });
    expectError(await client.patch(`/keys/${off.key.id}`, { clamp_output: "no" }), 400, "invalid_request");
    expect((await client.get(`/keys/${off.key.id}`)).body.key.clamp_output).toBe(false);
  });

  it("another account's key is 404 not_found for every key route, and stays unchanged", async () => {
    const mine = await createKey();
    const other = await signedInAccount(gateway);
    const routes: Array<[string, string, unknown?]> = [
      ["GET", `/keys/${mine.key.id}`],
      ["PATCH", `/keys/${mine.key.id}`, { token_cap: 1 }],
      ["DELETE", `/keys/${mine.key.id}?confirm=true`],
      ["DELETE", `/keys/${mine.key.id}?confirm=true&permanent=true`],
      ["POST", `/keys/${mine.key.id}/enable`, {}],
    ];
    for (const [method, path, body] of routes) {
      const response = await other.client.request(method, `/dashboard/api${path}`, body);
      expectError(response, 404, "not_found");
      expect(response.text).not.toContain(accountId);
    }
    expect((await other.client.get("/keys")).body.data).toEqual([]);
    expect((await client.get(`/keys/${mine.key.id}`)).body.key).toMatchObject({ status: "enabled", token_cap: null });
    expectError(await client.get("/keys/key_doesnotexist"), 404, "not_found");
  });

  it("at most 50 enabled keys: the 51st is 400 sub_key_limit_reached", async () => {
    const { client: full, account } = await signedInAccount(gateway);
    for (let i = 0; i < MAX_ENABLED_KEYS_PER_ACCOUNT; i++) await gateway.app.ctx.store.keys.create({ accountId: account.id, name: `bulk ${i}` });
    expectError(await full.post("/keys", { name: "one too many" }), 400, "sub_key_limit_reached");
    const first = (await full.get("/keys")).body.data[0];
    await full.delete(`/keys/${first.id}?confirm=true`);
    expect((await full.post("/keys", { name: "fits again" })).status).toBe(201);
  });

  it("a parent account that does not exist is 400 account_not_found; only admins may name another account", async () => {
    const admin = await signedInAccount(gateway, { admin: true });
    expectError(await admin.client.post("/keys", { account_id: "acct_missing" }), 400, "account_not_found");
    const forOther = await admin.client.post("/keys", { account_id: accountId, name: "minted by admin" });
    expect(forOther.status).toBe(201);
    expect(forOther.body.key.account_id).toBe(accountId);
    expectError(await client.post("/keys", { account_id: admin.account.id }), 403, "forbidden");
  });
});
