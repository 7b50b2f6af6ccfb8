// A shared provider key the upstream answers with 401 or 403 is disabled automatically (issue 40,
// item 4): the request fails over to the next key and succeeds, the key is shown disabled with an
// audit row, no process tries it again (a second gateway on the same database included) until an
// operator enables it. The config file's keys (catalog.source: file) are disabled the same way:
// test/gateway/refused-file-keys.test.ts. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const GOOD = "sk-good-key-0002";
const BAD = "sk-bad-key-0001";

describe.each(DATABASE_KINDS)("shared keys the upstream refuses, on %s", (kind) => {
  let mock: MockUpstream;
  let database: TestDatabase;
  let a: TestGateway;
  let b: TestGateway;
  let token: string;
  let key: string;
  let refusing = true;
  let refusingAll = false;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (req, res) => {
      if (refusingAll || (refusing && req.headers.authorization === `Bearer ${BAD}`))
        return json(res, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
      json(res, 200, chatCompletion("fine"));
    };
    database = await createTestDatabase(kind);
    const config = mockConfig({ openaiUrl: mock.url, openaiKeys: [BAD, GOOD], extra: "catalog: { source: database }" });
    a = await startGateway(config, { database });
    b = await startGateway(config, { database });
    token = (await a.app.ctx.store.adminTokens.create({ name: "keys", scopes: ADMIN_SCOPES })).raw;
    key = (await a.createAccount()).raw;
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
    await mock?.close();
  });

  const chat = (gateway: TestGateway) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
    });
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${a.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const mockaiKeys = async () =>
    ((await (await admin("GET", "/catalog")).json()) as { provider_keys: Array<{ id: string; provider: string; last4: string; status: string }> }).provider_keys.filter(
      (k) => k.provider === "mockai",
    );
  const triedBad = () => mock.requests.filter((r) => r.headers.authorization === `Bearer ${BAD}`).length;

  it("fails over past the refused key, disables it for every process with an audit row, and an operator enables it again", async () => {
    // The rotation may start at either key: until the bad one is tried, requests just succeed.
    for (let i = 0; i < 4 && triedBad() === 0; i++) expect((await chat(a)).status).toBe(200);
    expect(triedBad()).toBe(1);
    // Disabled behind the request (it does not wait for the catalog write).
    const refusedAt = performance.now();
    while ((await mockaiKeys()).find((k) => k.last4 === "0001")!.status !== "disabled") {
      expect(performance.now() - refusedAt).toBeLessThan(1_000);
      await sleep(20);
    }
    const bad = (await mockaiKeys()).find((k) => k.last4 === "0001")!;
    const audit = (await (await admin("GET", "/audit?action=catalog.provider_key.auto_disable")).json()) as {
      data: Array<{ target: { id: string }; after: { reason: string } }>;
    };
    expect(audit.data.map((row) => row.target.id)).toEqual([bad.id]);
    expect(audit.data[0]!.after.reason).toBe("the upstream answered HTTP 401");

    const changedAt = performance.now();
    while (b.app.ctx.live.current.config.providers.get("mockai")!.sharedKeys.includes(BAD)) {
      expect(performance.now() - changedAt).toBeLessThan(1_000);
      await sleep(20);
    }
    for (let i = 0; i < 6; i++) expect((await chat(i % 2 ? a : b)).status).toBe(200);
    expect(triedBad()).toBe(1);

    refusing = false;
    const enabled = await admin("PATCH", `/catalog/provider-keys/${bad.id}`, { status: "active" });
    expect(enabled.status).toBe(200);
    for (let i = 0; i < 4 && triedBad() === 1; i++) expect((await chat(a)).status).toBe(200);
    expect(triedBad()).toBe(2);
    expect((await mockaiKeys()).find((k) => k.id === bad.id)!.status).toBe("active");
  });

  it("answers 502 provider_error, never the upstream's 401, when every shared key is refused", async () => {
    refusingAll = true;
    const response = await chat(a);
    expect(response.status).toBe(502);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe("provider_error");
    expect(body.error.message).toContain("refused every key");
    // Disabled behind the request (it does not wait for the catalog write).
    const refusedAt = performance.now();
    while ((await mockaiKeys()).some((k) => k.status !== "disabled")) {
      expect(performance.now() - refusedAt).toBeLessThan(1_000);
      await sleep(20);
    }
    while (a.app.ctx.live.current.config.providers.get("mockai")!.sharedKeys.length > 0) {
      expect(performance.now() - refusedAt).toBeLessThan(2_000);
      await sleep(20);
    }
    const again = await chat(a);
    expect(again.status).toBe(502);
    expect(((await again.json()) as { error: { message: string } }).error.message).toContain("configured or enabled");
  });
});
