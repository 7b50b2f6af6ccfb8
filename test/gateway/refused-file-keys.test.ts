// The config file's provider keys (catalog.source: file) look after themselves like the database
// catalog's (issue 40, item 4): listed by their last four characters with an fk_ id, a key the
// upstream refuses (401/403) is disabled with an audit row and the request fails over to the next
// key; no process tries it again (a second gateway on the same database within a second, and a
// gateway started later) until an operator enables it; an operator disables, enables and tests
// them; the file stays the truth (a file key cannot be removed here). On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const GOOD = "sk-good-key-0002";
const BAD = "sk-bad-key-0001";

interface ListedKey {
  id: string;
  provider: string;
  last4: string;
  status: string;
  source: string;
  created_at: string | null;
}

describe.each(DATABASE_KINDS)("the config file's keys, on %s", (kind) => {
  let mock: MockUpstream;
  let database: TestDatabase;
  let config: string;
  let a: TestGateway;
  let b: TestGateway;
  let later: TestGateway | null = null;
  let token: string;
  let key: string;
  let refusing = true;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (req, res) => {
      if (refusing && req.headers.authorization === `Bearer ${BAD}`) return json(res, 401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } });
      json(res, 200, chatCompletion("fine"));
    };
    database = await createTestDatabase(kind);
    config = mockConfig({ openaiUrl: mock.url, openaiKeys: [BAD, GOOD] });
    a = await startGateway(config, { database });
    b = await startGateway(config, { database });
    token = (await a.app.ctx.store.adminTokens.create({ name: "keys", scopes: ADMIN_SCOPES })).raw;
    key = (await a.createAccount()).raw;
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await later?.close();
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
  const mockaiKeys = async () => ((await (await admin("GET", "/catalog")).json()) as { provider_keys: ListedKey[] }).provider_keys.filter((k) => k.provider === "mockai");
  const badKey = async () => (await mockaiKeys()).find((k) => k.last4 === "0001")!;
  const triedBad = () => mock.requests.filter((r) => r.headers.authorization === `Bearer ${BAD}`).length;
  /** Whether the gateway's snapshot serving now skips the bad key. */
  const skipsBad = (gateway: TestGateway) => !gateway.app.ctx.live.current.pipeline.refusedKeys.usable([BAD, GOOD]).includes(BAD);
  const within = async (ms: number, done: () => boolean | Promise<boolean>) => {
    const started = performance.now();
    while (!(await done())) {
      expect(performance.now() - started).toBeLessThan(ms);
      await sleep(20);
    }
  };

  it("lists the file's keys by their last four characters with fk_ ids, never the key", async () => {
    const listed = await (await admin("GET", "/catalog")).text();
    expect(listed).not.toContain(BAD);
    expect(listed).not.toContain(GOOD);
    const keys = await mockaiKeys();
    expect(keys.map((k) => [k.last4, k.status, k.source, k.created_at])).toEqual([
      ["0001", "active", "file", null],
      ["0002", "active", "file", null],
    ]);
    for (const k of keys) expect(k.id).toMatch(/^fk_[0-9a-f]{24}$/);
    // The same key has the same id in every process sharing the server secret.
    expect(await (await fetch(`${b.url}/admin/v1/catalog`, { headers: { authorization: `Bearer ${token}` } })).json()).toMatchObject({
      provider_keys: expect.arrayContaining(keys.map((k) => expect.objectContaining({ id: k.id }))) as unknown,
    });
  });

  it("disables a refused key for every process with an audit row, fails over, and keeps it disabled after a restart", async () => {
    for (let i = 0; i < 4 && triedBad() === 0; i++) expect((await chat(a)).status).toBe(200);
    expect(triedBad()).toBe(1);
    await within(1_000, async () => (await badKey()).status === "disabled");
    const bad = await badKey();
    const audit = (await (await admin("GET", "/audit?action=catalog.provider_key.auto_disable")).json()) as {
      data: Array<{ target: { id: string }; after: { reason: string; source: string } }>;
    };
    expect(audit.data.map((row) => row.target.id)).toEqual([bad.id]);
    expect(audit.data[0]!.after).toMatchObject({ reason: "the upstream answered HTTP 401", source: "file" });

    // The second process follows within a second, and neither tries the key again.
    await within(1_000, () => skipsBad(b));
    for (let i = 0; i < 6; i++) expect((await chat(i % 2 ? a : b)).status).toBe(200);
    expect(triedBad()).toBe(1);

    // A gateway started later (a restart) starts with the key disabled.
    later = await startGateway(config, { database });
    expect(skipsBad(later)).toBe(true);
    for (let i = 0; i < 3; i++) expect((await chat(later)).status).toBe(200);
    expect(triedBad()).toBe(1);
  });

  it("is enabled again by an operator, audited, and every process tries it again", async () => {
    refusing = false;
    const bad = await badKey();
    const enabled = await admin("PATCH", `/catalog/provider-keys/${bad.id}`, { status: "active" });
    expect(enabled.status).toBe(200);
    expect(((await enabled.json()) as { provider_key: ListedKey }).provider_key).toMatchObject({ id: bad.id, status: "active", source: "file" });
    expect((await badKey()).status).toBe("active");
    const audit = (await (await admin("GET", "/audit?action=catalog.provider_key.enable")).json()) as { data: Array<{ target: { id: string } }> };
    expect(audit.data.map((row) => row.target.id)).toEqual([bad.id]);
    await within(1_000, () => !skipsBad(b) && !skipsBad(later!));
    for (let i = 0; i < 4 && triedBad() === 1; i++) expect((await chat(b)).status).toBe(200);
    expect(triedBad()).toBe(2);
  });

  it("is disabled by an operator and tested; a file key is never removed here, an unknown one is 404", async () => {
    const good = (await mockaiKeys()).find((k) => k.last4 === "0002")!;
    const disabled = await admin("PATCH", `/catalog/provider-keys/${good.id}`, { status: "disabled" });
    expect(disabled.status).toBe(200);
    await within(1_000, () => a.app.ctx.live.current.pipeline.refusedKeys.usable([GOOD]).length === 0);
    const tested = await admin("POST", `/catalog/provider-keys/${good.id}/test`, {});
    expect(tested.status).toBe(200);
    expect(await tested.json()).toMatchObject({ key_id: good.id, provider: "mockai", ok: true, status: 200, refused: false });
    expect(mock.requests.at(-1)!.headers.authorization).toBe(`Bearer ${GOOD}`);
    expect((await admin("PATCH", `/catalog/provider-keys/${good.id}`, { status: "active" })).status).toBe(200);

    const removed = await admin("DELETE", `/catalog/provider-keys/${good.id}`);
    expect(removed.status).toBe(409);
    expect(((await removed.json()) as { error: { code: string } }).error.code).toBe("catalog_read_only");
    expect((await admin("PATCH", "/catalog/provider-keys/fk_000000000000000000000000", { status: "disabled" })).status).toBe(404);
  });
});
