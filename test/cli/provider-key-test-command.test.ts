// `gateway admin provider-keys test ID` (issue 40, item 4): the CLI's "Test" on a shared catalog key:
// one smallest request with that key, its status, latency and the operator's cost printed, exit 0;
// a key the upstream refuses is reported, disabled for every process, exit 1; the same for a key of
// the config file (its fk_ id). On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPERATOR_ACCOUNT_ID } from "../../src/store/operator-usage.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { createHarness, type CliHarness } from "./harness.js";

const GOOD = "sk-cli-good-0002";
const BAD = "sk-cli-bad-0001";

describe.each(DATABASE_KINDS)("gateway admin provider-keys test, on %s", (kind) => {
  let mock: MockUpstream;
  let cli: CliHarness;
  let gateway: TestGateway;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (req, res) => {
      if (req.headers.authorization === `Bearer ${BAD}`) return json(res, 401, { error: { message: "bad key", type: "invalid_request_error" } });
      json(res, 200, chatCompletion("O", { usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } }));
    };
    const config = `
catalog: { source: database }
server: { default_tier: standard }
providers:
  mock: { type: openai, base_url: "${mock.url}/v1", keys: ["${BAD}", "${GOOD}"] }
models:
  - { id: mock-chat, kind: chat, provider: mock, pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" } }
tiers:
  standard: { models: ["*"] }
`;
    cli = await createHarness(kind, config);
    gateway = await startGateway(config, { database: cli.database });
  });
  afterAll(async () => {
    await gateway?.close();
    await cli?.close();
    await mock?.close();
  });

  const keyEnding = async (last4: string) => (await gateway.app.ctx.store.catalog.providerKeys()).find((k) => k.last4 === last4)!;

  it("tests a working key: one request with it, the operator's cost in the ledger, exit 0", async () => {
    const good = await keyEnding("0002");
    const sentBefore = mock.requests.length;
    const result = await cli.run(["admin", "provider-keys", "test", good.id]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`mock key ${good.id}: works`);
    expect(result.stdout).toMatch(/status HTTP 200, \d+ ms, cost 0\.000012 USD \(the operator's\), model mock-chat/);
    expect(mock.requests.slice(sentBefore).map((r) => r.headers.authorization)).toEqual([`Bearer ${GOOD}`]);
    const view = await cli.json<{ request_id: string; cost_nano: string }>(["admin", "provider-keys", "test", good.id]);
    const row = await gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("request_id", "=", view.request_id).executeTakeFirstOrThrow();
    expect(row.account_id).toBe(OPERATOR_ACCOUNT_ID);
    expect(BigInt(row.cost_nano)).toBe(12_000n);
    expect((await gateway.app.ctx.store.ledger.verify()).broken).toBeNull();
  });

  it("reports a refused key, disables it for the running gateway too, exit 1", async () => {
    const bad = await keyEnding("0001");
    const result = await cli.run(["admin", "provider-keys", "test", bad.id]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("refused by the upstream (disabled now)");
    expect((await keyEnding("0001")).status).toBe("disabled");
    // The gateway's catalog watch swaps the key out of what it serves.
    await expect.poll(() => gateway.app.ctx.config.providers.get("mock")!.sharedKeys).toEqual([GOOD]);
  });
});

describe.each(DATABASE_KINDS)("gateway admin provider-keys test with the config file's keys, on %s", (kind) => {
  let mock: MockUpstream;
  let cli: CliHarness;
  let gateway: TestGateway;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (req, res) => (req.headers.authorization === `Bearer ${BAD}` ? json(res, 403, { error: { message: "forbidden" } }) : json(res, 200, chatCompletion("O")));
    const config = `
server: { default_tier: standard }
providers:
  mock: { type: openai, base_url: "${mock.url}/v1", keys: ["${BAD}", "${GOOD}"] }
models:
  - { id: mock-chat, kind: chat, provider: mock, pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" } }
tiers:
  standard: { models: ["*"] }
`;
    cli = await createHarness(kind, config);
    gateway = await startGateway(config, { database: cli.database });
  });
  afterAll(async () => {
    await gateway?.close();
    await cli?.close();
    await mock?.close();
  });

  it("tests an fk_ key; a refused one is disabled, and the running gateway skips it", async () => {
    const bad = (await gateway.app.ctx.catalog.providerKeys()).find((k) => k.last4 === "0001")!;
    expect(bad).toMatchObject({ source: "file", status: "active" });
    const result = await cli.run(["admin", "provider-keys", "test", bad.id]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("refused by the upstream (disabled now)");
    expect((await gateway.app.ctx.catalog.providerKeys()).find((k) => k.id === bad.id)!.status).toBe("disabled");
    await expect.poll(() => gateway.app.ctx.pipeline.refusedKeys.usable([BAD, GOOD])).toEqual([GOOD]);
  });
});
