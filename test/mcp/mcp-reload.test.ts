// A config reload and the MCP gateway: a server whose transport is unchanged keeps running (its stdio
// process is not restarted), a changed price applies to the next call, a removed server disappears
// from the listing and a server added by the reload is started and listed.
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { EVERYTHING_SERVER, startHttpMcpServer, type HttpMcpServer } from "../support/mcp-servers.js";

const ACTOR = { type: "cli" as const, id: null, name: "test", clientAddress: null, requestId: null };

function config(notes: HttpMcpServer, servers: { notesPrice?: string; withNotes: boolean; withOther: boolean }): string {
  const everything = `    - name: everything
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(EVERYTHING_SERVER)}, "stdio"]
`;
  const notesEntry = `    - name: notes
      url: ${JSON.stringify(notes.url)}
      headers: { Authorization: "Bearer ${notes.token}" }
      price_per_call_usd: "${servers.notesPrice ?? "0.10"}"
`;
  const other = `    - name: other
      url: ${JSON.stringify(notes.url)}
      headers: { Authorization: "Bearer ${notes.token}" }
`;
  return `${mockConfig({ openaiUrl: "http://127.0.0.1:9" })}
mcp:
  servers:
${everything}${servers.withNotes ? notesEntry : ""}${servers.withOther ? other : ""}`;
}

describe("MCP servers and a config reload", () => {
  let notes: HttpMcpServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    notes = await startHttpMcpServer("reloadcanary");
    gateway = await startGateway(config(notes, { withNotes: true, withOther: false }));
  });
  afterAll(async () => {
    await gateway?.close();
    await notes?.close();
  });

  it("restarts only what changed", async () => {
    const { raw, account } = await gateway.createAccount({ balance: "10" });
    const client = new Client({ name: "t", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${raw}` } } }));
    await client.callTool({ name: "notes__add", arguments: { a: 1, b: 2 } });
    const everything = gateway.app.server.mcpGateway.pool.get("everything")!;
    await everything.settled();
    const pid = everything.pid;
    expect(pid).toBeGreaterThan(0);

    writeFileSync(gateway.configPath, config(notes, { notesPrice: "0.30", withNotes: true, withOther: true }));
    expect((await gateway.app.reloadConfig(ACTOR)).status).toBe("reloaded");
    await client.callTool({ name: "notes__add", arguments: { a: 1, b: 2 } });
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("other__add");
    expect(gateway.app.server.mcpGateway.pool.get("everything")).toBe(everything);
    expect(everything.pid).toBe(pid);

    writeFileSync(gateway.configPath, config(notes, { withNotes: false, withOther: true }));
    expect((await gateway.app.reloadConfig(ACTOR)).status).toBe("reloaded");
    const after = (await client.listTools()).tools.map((t) => t.name);
    expect(after.some((name) => name.startsWith("notes__"))).toBe(false);
    expect(after).toContain("everything__echo");
    expect(everything.pid).toBe(pid);

    const charges = await gateway.app.ctx.store.db
      .selectFrom("ledger")
      .select("cost_nano")
      .where("account_id", "=", account.id)
      .where("route", "=", "mcp")
      .orderBy("created_at")
      .execute();
    expect(charges.map((c) => BigInt(c.cost_nano))).toEqual([100_000_000n, 300_000_000n]);
  });
});
