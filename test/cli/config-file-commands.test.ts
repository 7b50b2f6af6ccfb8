// `gateway config check FILE` lists every error of a file with its field path (issue 40, item 3),
// and `gateway config export` writes the catalog served as a file that check accepts and that
// reproduces it: from the file, and from the database after a change through the admin API.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { catalogDocumentOf } from "../../src/config/catalog-document.js";
import { readConfigFile } from "../../src/config/load.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { createHarness, TEST_CONFIG, type CliHarness } from "./harness.js";

describe("gateway config check", () => {
  let cli: CliHarness;
  beforeAll(async () => {
    cli = await createHarness("sqlite");
  });
  afterAll(async () => {
    await cli?.close();
  });

  const checkText = async (text: string) => {
    const path = join(cli.cwd, `check-${Math.random().toString(36).slice(2)}.yaml`);
    writeFileSync(path, text);
    return { path, result: await cli.run(["config", "check", path]) };
  };

  it("accepts a valid file with a summary, without a database", async () => {
    const { path, result } = await checkText(TEST_CONFIG);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(`${path}: valid: 1 providers, 1 models, 2 tiers (catalog.source: file)\n`);
  });

  it("lists every schema error at once, each with its field path", async () => {
    const { path, result } = await checkText(`providers:\n  p: { type: nosuch, base_url: "not a url" }\nmodels:\n  - { id: m, kind: sound, provider: p }\n`);
    expect(result.code).toBe(1);
    expect(result.errLines).toEqual([
      expect.stringMatching(new RegExp(`^${path}: providers\\.p\\.type: `)),
      expect.stringMatching(new RegExp(`^${path}: providers\\.p\\.base_url: `)),
      expect.stringMatching(new RegExp(`^${path}: models\\[0\\]\\.kind: `)),
      `${path}: 3 errors`,
    ]);
  });

  it("lists every catalogue error at once: a bad price, an unknown provider, a tier naming no model", async () => {
    const { path, result } = await checkText(
      TEST_CONFIG.replace('output_per_mtok: "2.00"', 'output_per_mtok: "two"')
        .replace("basic: { models: [mock-chat] }", "basic: { models: [mock-chat, ghost] }")
        .replace("tiers:\n", "  - { id: orphan, kind: chat, provider: nowhere }\ntiers:\n"),
    );
    expect(result.code).toBe(1);
    expect(result.errLines).toEqual([
      `${path}: models[0].pricing.output_per_mtok: "two" is not a non-negative USD amount with at most 9 decimals`,
      `${path}: models[1].provider: provider "nowhere" is not defined under providers`,
      `${path}: tiers.basic.models: model "ghost" is not defined under models`,
      `${path}: 3 errors`,
    ]);
    const json = await cli.run(["config", "check", path, "--json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({
      valid: false,
      errors: [{ field: "models[0].pricing.output_per_mtok" }, { field: "models[1].provider" }, { field: "tiers.basic.models" }],
    });
  });
});

describe.each(DATABASE_KINDS)("gateway config export, on %s", (kind) => {
  let cli: CliHarness;
  let gateway: TestGateway;

  beforeAll(async () => {
    cli = await createHarness(kind, `${TEST_CONFIG}\ncatalog: { source: database }\n`);
    gateway = await startGateway(`${TEST_CONFIG}\ncatalog: { source: database }\n`, { database: cli.database, env: { MOCK_SHARED_KEY: "sk-shared-0000" } });
  });
  afterAll(async () => {
    await gateway?.close();
    await cli?.close();
  });

  it("writes the database's latest version as a file check accepts and that reproduces it, keys left out", async () => {
    const token = (await gateway.app.ctx.store.adminTokens.create({ name: "export", scopes: ADMIN_SCOPES })).raw;
    const current = (await (await fetch(`${gateway.url}/admin/v1/catalog`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
      version: number;
      document: { models: Array<Record<string, unknown>> };
    };
    const document = { ...current.document, models: [...current.document.models, { id: "added-later", kind: "chat", provider: "mock", context_window: 8192 }] };
    const written = await fetch(`${gateway.url}/admin/v1/catalog/versions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ document, base_version: current.version }),
    });
    expect(written.status).toBe(201);
    // Stored as checked: the schema's defaults filled in (pricing: {}), as a file would load.
    const stored = ((await (await fetch(`${gateway.url}/admin/v1/catalog`, { headers: { authorization: `Bearer ${token}` } })).json()) as { document: unknown }).document;

    const output = join(cli.cwd, "exported.yaml");
    const exported = await cli.run(["config", "export", "--output", output]);
    expect(exported.code).toBe(0);
    const checked = await cli.run(["config", "check", output]);
    expect(checked.stdout).toContain("valid: 1 providers, 2 models, 2 tiers");
    const reread = catalogDocumentOf(readConfigFile(output, {}));
    expect(reread).toEqual(stored);

    const stdout = await cli.run(["config", "export"]);
    expect(stdout.stdout).toMatch(/^# The catalog of version 2 \(edit, /);
    expect(stdout.stdout).toContain("keys stored for: mock (1)");
    expect(stdout.stdout).not.toContain("sk-shared-0000");

    // The catalog's MCP servers go to mcp.servers, their header values left out and named in a comment.
    const canary = "mcp-export-canary-0123456789";
    const added = await fetch(`${gateway.url}/admin/v1/catalog/mcp-servers`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({
        name: "notes",
        entry: { url: "http://127.0.0.1:9/mcp", headers: { Authorization: `Bearer ${canary}` }, price_per_call_usd: "0.01" },
        base_version: 2,
      }),
    });
    expect(added.status, await added.clone().text()).toBe(201);
    const withMcp = await cli.run(["config", "export", "--output", output]);
    expect(withMcp.code).toBe(0);
    const text = readFileSync(output, "utf8");
    expect(text).toContain("# MCP server values are secrets and are not exported: notes (header Authorization).");
    expect(text).not.toContain(canary);
    expect((await cli.run(["config", "check", output])).code).toBe(0);
    expect(readConfigFile(output, {}).mcp.servers).toEqual([expect.objectContaining({ name: "notes", url: "http://127.0.0.1:9/mcp", price_per_call_usd: "0.01" })]);
  });
});
