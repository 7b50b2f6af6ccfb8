// GET /dashboard/api/admin/upstreams: every upstream key's circuit breaker for administrators, by
// fingerprint and never by key, after real failures through the gateway opened one; then each
// routing group's deployment.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyFingerprint } from "../../src/upstreams/upstream-health.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { expectError, signedInAccount, type DashboardClient } from "./support.js";

const BAD = "sk-mock-key-bad-upstream-aaaa";
const GOOD = "sk-mock-key-good-upstream-bbb";
const OWN = "sk-own-key-of-an-account-cccc";
const EXTRA = `
  - id: grouped
    kind: chat
    pricing: { input_per_mtok: "1", output_per_mtok: "2" }
    deployments:
      - { name: primary, provider: mockai }
upstream_health:
  min_requests: 2
  failure_threshold: 0.5
  open_ms: 60000
`;

describe.each(DATABASE_KINDS)("dashboard upstream health on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let admin: { client: DashboardClient; account: { id: string } };

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (req, res) => (req.key === BAD ? json(res, 500, { error: { message: "boom" } }) : json(res, 200, chatCompletion("ok")));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, openaiKeys: [BAD, GOOD], extra: EXTRA }), { kind });
    admin = await signedInAccount(gateway, { admin: true });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("shows an administrator each key's breaker, error rate and owner, by fingerprint only", async () => {
    const owner = await signedInAccount(gateway, { email: `owner-${kind}@example.com` });
    const own = await gateway.app.ctx.store.upstreamKeys.add({ accountId: owner.account.id, provider: "mockai", key: OWN });
    const { raw } = await gateway.createAccount({ balance: "10" });
    const badScope = `key:${keyFingerprint("mockai", BAD)}`;
    // Rotation alternates the first key, so the bad key fails every other request until its breaker opens.
    for (let i = 0; i < 6; i++) {
      await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
      });
    }
    // The state is written off the request path; the window every few seconds (here at once).
    await expect.poll(async () => (await gateway.app.ctx.store.upstreamHealth.all()).find((r) => r.scope === badScope)?.state).toBe("open");
    await gateway.app.ctx.pipeline.health.writeWindows();

    const response = await admin.client.get("/admin/upstreams");
    expect(response.status).toBe(200);
    for (const secret of [BAD, GOOD, OWN]) expect(response.text).not.toContain(secret);
    expect(response.text).not.toContain(OWN.slice(-4));
    expect(response.body.deployments).toEqual([expect.objectContaining({ deployment: "grouped/primary", provider: "mockai", state: "closed" })]);
    const keys = response.body.keys as Array<Record<string, unknown>>;
    expect(keys.map((k) => k.fingerprint)).toEqual([
      keyFingerprint("mockai", BAD),
      keyFingerprint("mockai", GOOD),
      keyFingerprint("mockanthropic", "sk-ant-mock-key-0001"),
      keyFingerprint("mockai", OWN),
    ]);
    const [bad, good, , ownRow] = keys;
    expect(bad).toMatchObject({ provider: "mockai", account_id: null, account_email: null, upstream_key_id: null, state: "open", failures: 2, requests: 2, error_rate: 1 });
    expect(bad!.cooldown_seconds).toBeGreaterThan(50);
    expect(typeof bad!.p50_ms).toBe("number");
    expect(good).toMatchObject({ state: "closed", cooldown_seconds: 0, failures: 0, error_rate: 0 });
    expect(ownRow).toMatchObject({
      provider: "mockai",
      account_id: owner.account.id,
      account_email: `owner-${kind}@example.com`,
      upstream_key_id: own.id,
      state: "closed",
      error_rate: null,
    });
  });

  it("refuses non-administrators with 403, suspended administrators with 402 and strangers with 401", async () => {
    const user = await signedInAccount(gateway);
    expectError(await user.client.get("/admin/upstreams"), 403, "forbidden");
    const suspended = await signedInAccount(gateway, { admin: true });
    await gateway.app.ctx.store.accounts.setStatus(suspended.account.id, "suspended");
    expectError(await suspended.client.get("/admin/upstreams"), 402, "account_suspended");
    const stranger = await fetch(`${gateway.url}/dashboard/api/admin/upstreams`);
    expect(stranger.status).toBe(401);
  });
});
