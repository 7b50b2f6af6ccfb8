// The MCP gateway (/mcp) with the official SDK client in front of two real MCP servers: the
// "everything" server over stdio (started and supervised by the gateway) and an HTTP server made with
// the SDK; a third server that is never up. Lists and calls tools, prompts and resources; allowlists
// of a key and of a workspace; a dead server reported, never an empty list; a killed stdio server
// restarted; the request log's entries (no arguments); the per-call price on the ledger and nothing
// charged for an error; a canary in the upstream URL, headers and error messages never reaching the
// client. On SQLite and PostgreSQL.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { EVERYTHING_SERVER, startHttpMcpServer, type HttpMcpServer } from "../support/mcp-servers.js";
import { UNAVAILABLE_META } from "../../src/mcp/session-server.js";

const CANARY = `cnry${randomBytes(6).toString("hex")}`;

function mcpConfig(notes: HttpMcpServer): string {
  return `${mockConfig({ openaiUrl: "http://127.0.0.1:9" })}
mcp:
  servers:
    - name: everything
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(EVERYTHING_SERVER)}, "stdio"]
    - name: notes
      url: ${JSON.stringify(notes.url)}
      headers: { Authorization: "Bearer \${NOTES_TOKEN}" }
      price_per_call_usd: "0.25"
    - name: dead
      url: "http://127.0.0.1:9/dead-${CANARY}"
      headers: { x-secret: "hdr-${CANARY}" }
      connect_timeout_ms: 2000
    - name: badauth
      url: ${JSON.stringify(notes.url)}
      headers: { Authorization: "Bearer wrong-${CANARY}" }
      connect_timeout_ms: 2000
`;
}

describe.each(DATABASE_KINDS)("MCP gateway (%s)", (kind) => {
  let notes: HttpMcpServer;
  let gateway: TestGateway;
  /** Every response body and header the clients received, for the canary check. */
  const seen: string[] = [];
  const clients: Client[] = [];

  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: "test-client", version: "1" });
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        const text = await response.clone().text();
        seen.push(JSON.stringify([...response.headers]), text);
        return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
      },
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  async function mcpRows() {
    await gateway.app.ctx.pipeline.requestLog!.flush();
    return gateway.app.ctx.store.db.selectFrom("request_log").selectAll().where("route", "like", "mcp/%").orderBy("created_at").execute();
  }

  beforeAll(async () => {
    notes = await startHttpMcpServer(CANARY);
    gateway = await startGateway(mcpConfig(notes), { kind, env: { NOTES_TOKEN: notes.token } });
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await gateway?.close();
    await notes?.close();
  });

  it("lists and calls tools, prompts and resources of both servers under prefixed names; the dead ones are reported", async () => {
    const { raw } = await gateway.createAccount({ balance: "10" });
    const client = await connect(raw);
    const tools = await client.listTools();
    const names = tools.tools.map((t) => t.name);
    expect(names).toContain("everything__echo");
    expect(names).toContain("notes__add");
    expect(names.every((n) => /^(everything|notes)__/.test(n))).toBe(true);
    const unavailable = tools._meta?.[UNAVAILABLE_META] as Array<{ server: string; reason: string }>;
    expect(unavailable.map((u) => u.server).sort()).toEqual(["badauth", "dead"]);
    expect(unavailable.find((u) => u.server === "badauth")!.reason).toContain("HTTP 401");

    const echo = await client.callTool({ name: "everything__echo", arguments: { message: "hello through the gateway" } });
    expect(echo.content).toEqual([{ type: "text", text: "Echo: hello through the gateway" }]);
    const sum = await client.callTool({ name: "notes__add", arguments: { a: 2, b: 40 } });
    expect(sum.content).toEqual([{ type: "text", text: "42" }]);

    const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
    expect(prompts).toEqual(expect.arrayContaining(["everything__simple-prompt", "notes__greet"]));
    const greeting = await client.getPrompt({ name: "notes__greet", arguments: { who: "Ada" } });
    expect(greeting.messages[0]!.content).toEqual({ type: "text", text: "Say hello to Ada." });
    const simple = await client.getPrompt({ name: "everything__simple-prompt" });
    expect(simple.messages.length).toBeGreaterThan(0);

    const resources = (await client.listResources()).resources.map((r) => r.uri);
    expect(resources).toContain("mcp-gw://notes/notes://one");
    const everythingDoc = resources.find((uri) => uri.startsWith("mcp-gw://everything/demo://"))!;
    expect(everythingDoc).toBeDefined();
    const note = await client.readResource({ uri: "mcp-gw://notes/notes://one" });
    expect(note.contents).toEqual([{ uri: "mcp-gw://notes/notes://one", text: "note one" }]);
    const doc = await client.readResource({ uri: everythingDoc });
    expect(doc.contents[0]!.uri).toBe(everythingDoc);
    const templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
    expect(templates.some((t) => t.startsWith("mcp-gw://everything/demo://resource/dynamic/"))).toBe(true);
  });

  it("charges a priced tool call once on the ledger; nothing for a failed call or an error result", async () => {
    const { raw, account } = await gateway.createAccount({ balance: "10" });
    const client = await connect(raw);
    await client.callTool({ name: "notes__add", arguments: { a: 1, b: 1 } });
    const failed = await client.callTool({ name: "notes__fail", arguments: {} }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(McpError);
    expect((failed as McpError).message).toMatch(/MCP server notes failed tools\/call: it answered with an error/);
    const broken = await client.callTool({ name: "notes__broken", arguments: {} });
    expect(broken.isError).toBe(true);
    // The result is the tool's (passed on), scrubbed of the server's credentials.
    expect(broken.content).toEqual([{ type: "text", text: "the tool could not do it with [redacted]" }]);
    const ledger = await gateway.app.ctx.store.db.selectFrom("ledger").select(["cost_nano", "model", "route"]).where("account_id", "=", account.id).execute();
    const charges = ledger.filter((row) => row.route === "mcp");
    expect(charges).toHaveLength(1);
    expect(BigInt(charges[0]!.cost_nano)).toBe(250_000_000n);
    expect(charges[0]!.model).toBe("notes__add");
    const after = await gateway.app.ctx.store.accounts.get(account.id);
    expect(after!.balance).toBe(10_000_000_000n - 250_000_000n);
  });

  it("refuses a tool call on an account without balance", async () => {
    const { raw } = await gateway.createAccount({ balance: "0" });
    const client = await connect(raw);
    for (const name of ["notes__add", "everything__echo"]) {
      const refused = await client.callTool({ name, arguments: { a: 1, b: 2, message: "x" } }).then(
        () => null,
        (error: unknown) => error as McpError,
      );
      expect(refused?.message, name).toMatch(/balance/i);
    }
  });

  it("a key's allowlist hides tools and refuses calling them; a workspace's narrows it", async () => {
    const { account, key, raw } = await gateway.createAccount({ balance: "10" });
    await gateway.app.ctx.store.keys.setPolicy(key.id, { allowedMcp: ["notes__add", "everything"] });
    const client = await connect(raw);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("notes__add");
    expect(names).toContain("everything__echo");
    expect(names).not.toContain("notes__fail");
    const refused = await client.callTool({ name: "notes__fail", arguments: {} }).then(
      () => null,
      (error: unknown) => error as McpError,
    );
    expect(refused?.message).toMatch(/not allowed for this key.*key's MCP allowlist/);
    expect(notes.calls.filter((c) => c.tool === "fail")).toHaveLength(1); // only the earlier test's call reached it
    // notes is not allowed as a whole: its prompts are hidden.
    expect((await client.listPrompts()).prompts.map((p) => p.name).some((n) => n.startsWith("notes__"))).toBe(false);

    const store = gateway.app.ctx.store;
    const team = await store.workspaces.create(`Team ${kind}`, account.id);
    await store.workspaceBudgets.setPolicy(team.id, { allowedMcp: ["everything__echo"] });
    const member = await store.keys.create({ accountId: account.id, workspaceId: team.id });
    const teamClient = await connect(member.raw);
    expect((await teamClient.listTools()).tools.map((t) => t.name)).toEqual(["everything__echo"]);
    const teamRefused = await teamClient.callTool({ name: "notes__add", arguments: { a: 1, b: 2 } }).then(
      () => null,
      (error: unknown) => error as McpError,
    );
    expect(teamRefused?.message).toMatch(/workspace's MCP allowlist/);
  });

  it("a listing whose every server is down is an error naming them, not an empty list", async () => {
    const { key, raw } = await gateway.createAccount({ balance: "10" });
    await gateway.app.ctx.store.keys.setPolicy(key.id, { allowedMcp: ["dead", "badauth"] });
    const client = await connect(raw);
    const failed = await client.listTools().then(
      () => null,
      (error: unknown) => error as McpError,
    );
    expect(failed?.message).toMatch(/No MCP server could list its tools: dead: it could not be reached.*badauth: its HTTP endpoint answered HTTP 401/);
    const call = await client.callTool({ name: "dead__anything", arguments: {} }).then(
      () => null,
      (error: unknown) => error as McpError,
    );
    expect(call?.message).toMatch(/MCP server dead is unavailable: it could not be reached/);
  });

  it("restarts the stdio server when its process dies", async () => {
    const server = gateway.app.server.mcpGateway.pool.get("everything")!;
    const pid = server.pid!;
    const before = server.connections;
    expect(pid).toBeGreaterThan(0);
    process.kill(pid, "SIGKILL");
    const deadline = Date.now() + 20_000;
    while (!(server.connections > before && server.state.kind === "ready") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(server.state.kind).toBe("ready");
    expect(server.pid).not.toBe(pid);
    const { raw } = await gateway.createAccount({ balance: "10" });
    const client = await connect(raw);
    const echo = await client.callTool({ name: "everything__echo", arguments: { message: "again" } });
    expect(echo.content).toEqual([{ type: "text", text: "Echo: again" }]);
  });

  it("records every call in the request log (server, tool, status, latency), never its arguments or result", async () => {
    const { raw, key } = await gateway.createAccount({ balance: "10" });
    const client = await connect(raw);
    const marker = `ARG-${randomBytes(4).toString("hex")}`;
    await client.callTool({ name: "everything__echo", arguments: { message: marker } });
    await client.callTool({ name: "notes__fail", arguments: {} }).catch(() => undefined);
    const rows = (await mcpRows()).filter((row) => row.key_id === key.id);
    expect(rows.map((r) => [r.route, r.provider, r.model, r.requested_model, Number(r.status)])).toEqual([
      ["mcp/tools/call", "everything", "echo", "everything__echo", 200],
      ["mcp/tools/call", "notes", "fail", "notes__fail", 502],
    ]);
    for (const row of rows) expect(Number(row.latency_us)).toBeGreaterThan(0);
    expect(rows[1]!.error_type).toBe("provider_error");
    const stored = JSON.stringify(await mcpRows(), (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value));
    expect(stored).not.toContain(marker);
    expect(stored).not.toContain(CANARY);
  });

  it("never lets the upstream URL, headers or error messages reach the client", async () => {
    // Everything the clients of this suite received, the failures and the 401 server included.
    expect(seen.length).toBeGreaterThan(10);
    for (const text of seen) expect(text).not.toContain(CANARY);
    expect(seen.join("\n")).not.toContain(notes.token);
  });

  it("refuses /mcp without a key and an unknown session", async () => {
    const anonymous = await fetch(`${gateway.url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("x-request-id")).toBeTruthy();
    const { raw } = await gateway.createAccount({ balance: "10" });
    const stranger = await fetch(`${gateway.url}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${raw}`, "mcp-session-id": "not-a-session" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(stranger.status).toBe(404);
  });

  it("refuses the next request of an open session once its key is revoked", async () => {
    const { raw, key } = await gateway.createAccount({ balance: "10" });
    const client = await connect(raw);
    await client.callTool({ name: "everything__echo", arguments: { message: "before" } });
    await gateway.app.ctx.store.keys.revoke(key.id);
    gateway.app.ctx.pipeline.authCache.invalidateKey(key.hash);
    const refused = await client.callTool({ name: "everything__echo", arguments: { message: "after" } }).then(
      () => null,
      (error: unknown) => error as Error,
    );
    expect(refused?.message).toMatch(/401|revoked/);
  });
});
