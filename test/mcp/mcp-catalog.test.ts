// MCP servers in the live catalog (issue 42, "works with hot reload and the live catalog"): a remote
// server added through the admin API on one gateway is listed through /mcp by the official SDK client
// on a second gateway sharing the database; a price change keeps the running server, disabling and
// deleting it unlists it. Its header value (a canary) is in no admin API answer, catalog document,
// audit row, log line or stored row in clear, nor in what the MCP client sees; a name the config
// file uses, a stdio command (without mcp.allow_catalog_stdio) and plain http off loopback are
// refused. On SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { EVERYTHING_SERVER, startHttpMcpServer, type HttpMcpServer } from "../support/mcp-servers.js";

interface ErrorBody {
  error: { type: string; errors?: Array<{ field: string; message: string }> };
}

function config(notes: HttpMcpServer, extra = ""): string {
  return `${mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: "catalog: { source: database }" })}
mcp:
${extra}  servers:
    - name: fileside
      url: ${JSON.stringify(notes.url)}
      headers: { Authorization: "Bearer ${notes.token}" }
`;
}

/** JSON text of rows that may hold bigints. */
function plain(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
}

async function mcpClient(gateway: TestGateway, key: string): Promise<Client> {
  const client = new Client({ name: "catalog-test", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

/** The tool names once `done` holds for them, or the last listing after a few seconds (the test then fails on it). */
async function toolsWhen(client: Client, done: (names: string[]) => boolean): Promise<string[]> {
  let names: string[] = [];
  for (let i = 0; i < 60; i++) {
    names = (await client.listTools()).tools.map((t) => t.name);
    if (done(names)) return names;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return names;
}

describe.each(DATABASE_KINDS)("MCP servers in the live catalog, on %s", (kind) => {
  let notes: HttpMcpServer;
  let database: TestDatabase;
  let a: TestGateway;
  let b: TestGateway;
  let token: string;
  let key: string;
  const answers: string[] = [];

  beforeAll(async () => {
    notes = await startHttpMcpServer(`catalogcanary${kind}`);
    database = await createTestDatabase(kind);
    a = await startGateway(config(notes), { database });
    b = await startGateway(config(notes), { database });
    token = (await a.app.ctx.store.adminTokens.create({ name: "catalog", scopes: ADMIN_SCOPES })).raw;
    key = (await a.createAccount({ balance: "10" })).raw;
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await database?.drop();
    await notes?.close();
  });

  /** Every answer's text is kept: none may hold the canary. */
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${a.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    answers.push(text);
    return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
  };
  const version = async () => (await admin("GET", "/catalog")).body.version as number;
  const write = async (method: string, path: string, body: Record<string, unknown> = {}) =>
    admin(method, method === "DELETE" ? `${path}?base_version=${await version()}` : path, method === "DELETE" ? undefined : { ...body, base_version: await version() });

  it("serves a server added through the admin API in every process, its header value never shown", async () => {
    const client = await mcpClient(b, key);
    expect(await toolsWhen(client, (names) => names.includes("fileside__add"))).toContain("fileside__add");

    const added = await write("POST", "/catalog/mcp-servers", {
      name: "notes",
      entry: { url: notes.url, headers: { Authorization: `Bearer ${notes.token}` }, price_per_call_usd: "0.01" },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    expect((added.body.after as { headers: unknown }).headers).toEqual({ Authorization: { set: true, last4: notes.token.slice(-4) } });

    expect(await toolsWhen(client, (names) => names.includes("notes__add"))).toContain("notes__add");
    const sum = await client.callTool({ name: "notes__add", arguments: { a: 2, b: 3 } });
    expect(sum.content).toEqual([{ type: "text", text: "5" }]);
    // The server's own error text names the token: the client sees it scrubbed.
    const broken = await client.callTool({ name: "notes__broken", arguments: {} });
    expect(JSON.stringify(broken)).not.toContain(notes.token);
    expect(JSON.stringify(await client.listTools())).not.toContain(notes.token);

    // A price change keeps the running server (same transport); {"set": true} keeps the stored header.
    const running = b.app.server.mcpGateway.pool.get("notes");
    expect(running).toBeDefined();
    const priced = await write("PATCH", "/catalog/mcp-servers/notes", { set: { price_per_call_usd: "0.02", headers: { Authorization: { set: true } } } });
    expect(priced.status, JSON.stringify(priced.body)).toBe(200);
    await toolsWhen(client, () => b.app.server.mcpGateway.pool.settings?.servers.find((s) => s.name === "notes")?.pricePerCall === 20_000_000n);
    expect(b.app.server.mcpGateway.pool.settings?.servers.find((s) => s.name === "notes")?.pricePerCall).toBe(20_000_000n);
    expect(b.app.server.mcpGateway.pool.get("notes")).toBe(running);
    expect((await client.callTool({ name: "notes__add", arguments: { a: 1, b: 1 } })).content).toEqual([{ type: "text", text: "2" }]);

    // Disabled: unlisted; enabled: back.
    expect((await write("POST", "/catalog/mcp-servers/notes/disable")).status).toBe(200);
    expect(await toolsWhen(client, (names) => !names.includes("notes__add"))).not.toContain("notes__add");
    expect((await write("POST", "/catalog/mcp-servers/notes/enable")).status).toBe(200);
    expect(await toolsWhen(client, (names) => names.includes("notes__add"))).toContain("notes__add");

    // Every read of the catalog and of its history shows the header as set, never its value.
    const listed = await admin("GET", "/catalog/mcp-servers");
    expect(listed.body.data).toEqual([expect.objectContaining({ name: "notes", disabled: false })]);
    const one = await admin("GET", "/catalog/mcp-servers/notes");
    expect((one.body.entry as { headers: unknown }).headers).toEqual({ Authorization: { set: true, last4: notes.token.slice(-4) } });
    for (const row of (await admin("GET", "/catalog/versions?limit=100")).body.data as Array<{ version: number }>) await admin("GET", `/catalog/versions/${row.version}`);
    // The diff from the seeded version names the server added since, its header as set only.
    const diff = await admin("GET", "/catalog/diff?from=1");
    const mcpChanges = (diff.body.changes as { mcp_servers: { added: Record<string, { headers: unknown }> } }).mcp_servers;
    expect(mcpChanges.added.notes?.headers).toEqual({ Authorization: { set: true, last4: notes.token.slice(-4) } });
    const audit = await admin("GET", "/audit?target_type=catalog&limit=100");
    const actions = (audit.body.data as Array<{ action: string }>).map((row) => row.action);
    expect(actions).toEqual(expect.arrayContaining(["catalog.mcp_server.create", "catalog.mcp_server.update", "catalog.mcp_server.disable", "catalog.mcp_server.enable"]));

    // Deleted: unlisted, and its stored value gone.
    expect((await write("DELETE", "/catalog/mcp-servers/notes")).status).toBe(200);
    expect(await toolsWhen(client, (names) => !names.includes("notes__add"))).not.toContain("notes__add");
    const stored = await a.app.ctx.store.db.selectFrom("mcp_server_secrets").selectAll().execute();
    expect(stored).toEqual([]);
    expect((await admin("GET", "/audit?target_type=catalog&limit=100")).body.data).toEqual(
      expect.arrayContaining([expect.objectContaining({ action: "catalog.mcp_server.delete" })]),
    );
    await client.close();
  });

  it("keeps the header value out of every answer, document, log line and stored row in clear", async () => {
    // Stored again, to look at the row while it exists.
    expect((await write("POST", "/catalog/mcp-servers", { name: "again", entry: { url: notes.url, headers: { Authorization: `Bearer ${notes.token}` } } })).status).toBe(201);
    const rows = await a.app.ctx.store.db.selectFrom("mcp_server_secrets").selectAll().execute();
    expect(rows.map((r) => [r.server, r.kind, r.name])).toEqual([["again", "header", "Authorization"]]);
    const documents = await a.app.ctx.store.db.selectFrom("catalog_versions").select("document").execute();
    const audit = await a.app.ctx.store.db.selectFrom("audit_log").selectAll().execute();
    const everything = [...answers, ...rows.map((r) => r.ciphertext), ...documents.map((d) => d.document), plain(audit), plain(a.logs), plain(b.logs)];
    expect(everything.filter((text) => text.includes(notes.token))).toEqual([]);
  });

  it("shows a server removed by a whole-document change in the version's diff and audit row", async () => {
    const current = await admin("GET", "/catalog");
    const document = current.body.document as { mcp_servers?: Record<string, unknown> };
    expect(Object.keys(document.mcp_servers ?? {})).toContain("again");
    const rest = Object.fromEntries(Object.entries(document.mcp_servers ?? {}).filter(([name]) => name !== "again"));
    const replaced = await admin("POST", "/catalog/versions", { document: { ...document, mcp_servers: rest }, base_version: current.body.version });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(201);
    const diff = await admin("GET", `/catalog/diff?from=${current.body.version as number}`);
    const removed = (diff.body.changes as { mcp_servers: { removed: Record<string, { headers: unknown }> } }).mcp_servers.removed;
    expect(removed.again?.headers).toEqual({ Authorization: { set: true, last4: notes.token.slice(-4) } });
    const audit = (await admin("GET", "/audit?target_type=catalog&action=catalog.update&limit=1")).body.data as Array<{
      before: { mcp_servers?: Record<string, unknown> };
      after: { mcp_servers?: unknown };
    }>;
    expect(Object.keys(audit[0]?.before.mcp_servers ?? {})).toEqual(["again"]);
    expect(audit[0]?.after.mcp_servers).toBeUndefined();
    expect(answers.filter((text) => text.includes(notes.token))).toEqual([]);
  });

  it("refuses a file server's name, a stdio command without allow_catalog_stdio, and plain http off loopback", async () => {
    const fields = async (name: string, entry: Record<string, unknown>) => {
      const refused = await write("POST", "/catalog/mcp-servers", { name, entry });
      expect(refused.status).toBe(400);
      return ((refused.body as unknown as ErrorBody).error.errors ?? []).map((e) => e.field);
    };
    expect(await fields("fileside", { url: notes.url })).toContain("mcp_servers.fileside");
    expect(await fields("local", { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"] })).toContain("mcp_servers.local.command");
    expect(await fields("plain", { url: "http://mcp.example.com/mcp" })).toContain("mcp_servers.plain.url");
    // A plain value never goes into the document, even through a whole-document replace.
    const { body } = await admin("GET", "/catalog");
    const document = body.document as Record<string, unknown>;
    const replaced = await admin("POST", "/catalog/versions", {
      base_version: body.version,
      document: { ...document, mcp_servers: { sneaky: { url: notes.url, headers: { Authorization: "Bearer plain-value-here" } } } },
    });
    expect(replaced.status).toBe(400);
    expect(b.app.server.mcpGateway.pool.get("local")).toBeUndefined();
  });
});

describe("a stdio server from the live catalog with mcp.allow_catalog_stdio", () => {
  let notes: HttpMcpServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    notes = await startHttpMcpServer("stdiocatalog");
    gateway = await startGateway(config(notes, "  allow_catalog_stdio: true\n"));
  });
  afterAll(async () => {
    await gateway?.close();
    await notes?.close();
  });

  it("starts it and lists its tools", async () => {
    const token = (await gateway.app.ctx.store.adminTokens.create({ name: "catalog", scopes: ADMIN_SCOPES })).raw;
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const base = ((await (await fetch(`${gateway.url}/admin/v1/catalog`, { headers })).json()) as { version: number }).version;
    const added = await fetch(`${gateway.url}/admin/v1/catalog/mcp-servers`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "everything",
        entry: { command: process.execPath, args: [EVERYTHING_SERVER, "stdio"], env: { CANARY_VALUE: "stdio-env-canary-1234" } },
        base_version: base,
      }),
    });
    const text = await added.text();
    expect(added.status, text).toBe(201);
    expect(text).not.toContain("stdio-env-canary-1234");
    const client = await mcpClient(gateway, (await gateway.createAccount({ balance: "1" })).raw);
    expect(await toolsWhen(client, (names) => names.includes("everything__echo"))).toContain("everything__echo");
    await client.close();
  });
});
