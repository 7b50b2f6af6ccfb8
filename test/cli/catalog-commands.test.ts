// `gateway admin catalog ...` (issue 40, item 1): the live catalog one entry at a time from the
// CLI, through the admin API's own edit (one version per change, checked like the whole document,
// audited as the CLI actor), served by a running gateway on the same database. SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { sleep } from "../support/mock-upstream.js";
import { createHarness, TEST_CONFIG, type CliHarness } from "./harness.js";

const DATABASE_CONFIG = `${TEST_CONFIG}\ncatalog: { source: database }\n`;

describe.each(DATABASE_KINDS)("gateway admin catalog, on %s", (kind) => {
  let cli: CliHarness;
  let gateway: TestGateway;

  beforeAll(async () => {
    cli = await createHarness(kind, DATABASE_CONFIG);
    gateway = await startGateway(DATABASE_CONFIG, { database: cli.database, env: { MOCK_SHARED_KEY: "sk-shared-0000" } });
  });
  afterAll(async () => {
    await gateway?.close();
    await cli?.close();
  });

  const served = () => [...gateway.app.ctx.live.current.config.models.keys()];
  async function until(condition: () => boolean) {
    const start = performance.now();
    while (!condition()) {
      expect(performance.now() - start).toBeLessThan(2_000);
      await sleep(20);
    }
  }

  it("adds, changes, disables, enables and removes entries, each one version the gateway serves", async () => {
    const providers = await cli.json<{ version: number; data: Array<{ name: string }> }>(["admin", "catalog", "providers", "list"]);
    expect(providers.version).toBe(1);
    expect(providers.data.map((p) => p.name)).toEqual(["mock"]);

    const added = await cli.json<{ version: number; after: unknown }>(["admin", "catalog", "models", "add", "cli-model", "-"], {
      stdin: JSON.stringify({ kind: "chat", provider: "mock", pricing: { input_per_mtok: "0.5" } }),
    });
    expect(added).toMatchObject({ version: 2, after: { id: "cli-model", provider: "mock" } });
    await until(() => served().includes("cli-model"));

    const set = await cli.run(["admin", "catalog", "models", "set", "cli-model", '{"context_window":32000}']);
    expect(set.code).toBe(0);
    expect(set.stdout).toBe("catalog version 3: update model cli-model\n");
    expect(await cli.json(["admin", "catalog", "models", "show", "cli-model"])).toMatchObject({ context_window: 32000 });

    expect((await cli.run(["admin", "catalog", "models", "disable", "cli-model"])).code).toBe(0);
    await until(() => !served().includes("cli-model"));
    const table = await cli.run(["admin", "catalog", "models", "list"]);
    expect(table.stdout).toMatch(/cli-model\s+disabled\s+chat\s+mock/);
    expect((await cli.run(["admin", "catalog", "models", "enable", "cli-model"])).code).toBe(0);
    await until(() => served().includes("cli-model"));

    expect((await cli.run(["admin", "catalog", "models", "remove", "cli-model"])).code).toBe(0);
    await until(() => !served().includes("cli-model"));
    expect((await cli.json<{ version: number }>(["admin", "catalog", "tiers", "list"])).version).toBe(6);
  });

  it("refuses a bad change with every error, a stale base and a provider in use, changing nothing", async () => {
    const bad = await cli.run(["admin", "catalog", "models", "add", "broken", '{"kind":"sound","provider":"mock","modalities":{"input":[],"output":["text"]}}']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("models[1].kind");
    expect(bad.stderr).toContain("models[1].modalities.input");
    const stale = await cli.run(["admin", "catalog", "tiers", "set", "basic", '{"models":["*"]}', "--base", "2"]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/^gateway: conflict: The catalog changed meanwhile/);
    const inUse = await cli.run(["admin", "catalog", "providers", "remove", "mock"]);
    expect(inUse.stderr).toContain("models[0].provider");
    expect((await cli.run(["admin", "catalog", "tiers", "disable", "basic"])).code).toBe(2);
    expect((await cli.json<{ version: number }>(["admin", "catalog", "tiers", "list"])).version).toBe(6);
  });

  it("audits every change as the CLI actor with the entry before and after", async () => {
    const rows = await gateway.app.ctx.store.audit.list({ targetType: "catalog", limit: 20 });
    const entityRows = rows.filter((row) => row.action !== "catalog.seed");
    expect(entityRows.map((row) => row.action).reverse()).toEqual([
      "catalog.model.create",
      "catalog.model.update",
      "catalog.model.disable",
      "catalog.model.enable",
      "catalog.model.delete",
    ]);
    expect(entityRows.every((row) => row.actor.type === "cli")).toBe(true);
    const removal = entityRows[0]!;
    expect(removal.before).toMatchObject({ version: 5, entry: { id: "cli-model", context_window: 32000 } });
    expect(removal.after).toEqual({ version: 6, entry: null });
  });

  it("adds an MCP server whose header value is stored, never printed, and disables it", async () => {
    const mcpServed = () => gateway.app.ctx.live.current.config.mcp.servers.map((server) => server.name);
    const value = "Bearer cli-mcp-canary-5e1a";
    const added = await cli.run(["admin", "catalog", "mcp-servers", "add", "tickets", "-", "--json"], {
      stdin: JSON.stringify({ url: "https://mcp.tickets.example.com/mcp", headers: { Authorization: value } }),
    });
    expect(added.code, added.stderr).toBe(0);
    await until(() => mcpServed().includes("tickets"));
    const listed = await cli.run(["admin", "catalog", "mcp-servers", "list", "--json"]);
    const shown = await cli.run(["admin", "catalog", "mcp-servers", "show", "tickets"]);
    expect(JSON.parse(shown.stdout)).toMatchObject({ headers: { Authorization: { set: true, last4: value.slice(-4) } } });
    for (const output of [added, listed, shown]) expect(output.stdout + output.stderr).not.toContain(value);
    expect((await cli.run(["admin", "catalog", "mcp-servers", "disable", "tickets"])).code).toBe(0);
    await until(() => !mcpServed().includes("tickets"));
    expect((await cli.run(["admin", "catalog", "mcp-servers", "remove", "tickets"])).code).toBe(0);
  });
});
