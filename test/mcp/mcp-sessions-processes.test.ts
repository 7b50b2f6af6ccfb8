// MCP sessions across TWO gateway processes sharing one database (SQLite file or PostgreSQL), with the
// official SDK client and an HTTP MCP server: a session opened on one process is served by the other
// (rebuilt there from the stored initialize), another key's id stays unknown, a DELETE on one is
// refused on both; the per-key session limit closes the least recently used across processes; a
// config reload's list_changed reaches a GET stream held by the process that did not open the
// session; a workspace allowlist hides and refuses there too; an rpm limit on tool calls is exact
// across both; an idle session is refused by both.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { openStore, type Store } from "../../src/store/index.js";
import { killAll, PROCESS_TEST_TIMEOUT_MS, startGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { startHttpMcpServer, type HttpMcpServer } from "../support/mcp-servers.js";

afterAll(() => killAll());

/** The shortest idle time the config allows: the idle step waits it out. */
const IDLE_S = 10;

function config(notes: HttpMcpServer, withOther: boolean): string {
  const server = (name: string) => `    - name: ${name}
      url: ${JSON.stringify(notes.url)}
      headers: { Authorization: "Bearer ${notes.token}" }
`;
  return `${mockConfig({ openaiUrl: "http://127.0.0.1:9" })}
mcp:
  max_sessions_per_key: 2
  session_idle_s: ${IDLE_S}
  servers:
${server("notes")}${withOther ? server("other") : ""}`;
}

/** Which process a client request goes to: by its method (POST bodies) or its HTTP method. */
type Route = (method: string, body: string) => number;

const errorOf = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => error as McpError,
  );

for (const kind of DATABASE_KINDS) {
  describe(`MCP sessions across two gateway processes on ${kind}`, () => {
    it("a session works on both processes, and its limits, expiry and closing hold on both", { timeout: PROCESS_TEST_TIMEOUT_MS + 60_000 }, async () => {
      const notes = await startHttpMcpServer(`sessions${kind}`);
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), "gw-mcp-sessions-"));
      const configPath = join(dir, "gateway.config.yaml");
      writeFileSync(configPath, config(notes, false));
      const env = { ...database.env, GATEWAY_CONFIG: configPath, LOG_LEVEL: "warn" };
      const store: Store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      const clients: Client[] = [];
      try {
        const gateways = await Promise.all([startGateway(dir, env), startGateway(dir, env)]);
        await Promise.all(gateways.map((g) => waitUntilHealthy(g)));
        const account = await store.accounts.create({ email: `mcp-sessions-${kind}@example.com`, tier: "standard", balance: 100_000_000_000n });
        const newKey = async (limits?: { requests_per_minute: number }) => store.keys.create({ accountId: account.id, ...(limits && { limits }) });

        /** An SDK client whose requests go to the process `route` names; `gets` counts the GET streams it asked for. */
        async function connect(raw: string, route: Route) {
          const streams = { gets: 0 };
          const transport = new StreamableHTTPClientTransport(new URL(`${gateways[0].baseUrl}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${raw}` } },
            fetch: async (url, init) => {
              const method = init?.method ?? "GET";
              const target = gateways[route(method, typeof init?.body === "string" ? init.body : "")]!;
              if (method === "GET") streams.gets += 1;
              const response = await fetch(String(url).replace(gateways[0].baseUrl, target.baseUrl), init);
              return response;
            },
          });
          const client = new Client({ name: "sessions-test", version: "1" });
          await client.connect(transport);
          clients.push(client);
          return { client, transport, streams };
        }
        const initializeOnFirst: Route = (method, body) => (method === "POST" && body.includes('"method":"initialize"') ? 0 : 1);

        /** A raw tools/list in a session on one process: its HTTP status and error code. */
        async function rawList(gateway: GatewayProcess, raw: string, sessionId: string) {
          const response = await fetch(`${gateway.baseUrl}/mcp`, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${raw}`, "mcp-session-id": sessionId },
            body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
          });
          const text = await response.text();
          return { status: response.status, code: response.status === 200 ? null : (JSON.parse(text) as { error: { code: string } }).error.code };
        }
        const refusedOnBoth = async (raw: string, sessionId: string) => {
          await waitFor(
            async () => {
              const answers = await Promise.all(gateways.map((g) => rawList(g, raw, sessionId)));
              return answers.every((a) => a.status === 404 && a.code === "mcp_session_not_found");
            },
            5_000,
            () => `session ${sessionId} still answered on a process`,
          );
        };

        // Opened on the first process, listed and called on the second (which rebuilds it).
        const owner = await newKey();
        const { client, transport } = await connect(owner.raw, initializeOnFirst);
        const sessionId = transport.sessionId!;
        expect(sessionId).toMatch(/^mcps_/);
        expect((await client.listTools()).tools.map((t) => t.name)).toEqual(["notes__add", "notes__fail", "notes__broken"]);
        expect((await client.callTool({ name: "notes__add", arguments: { a: 40, b: 2 } })).content).toEqual([{ type: "text", text: "42" }]);
        expect(await rawList(gateways[0], owner.raw, sessionId)).toEqual({ status: 200, code: null });
        // Another key's request with this id: not found on either process.
        const stranger = await newKey();
        for (const gateway of gateways) expect(await rawList(gateway, stranger.raw, sessionId)).toEqual({ status: 404, code: "mcp_session_not_found" });
        // DELETE (on the second process): refused there at once, on the first within about a second.
        await transport.terminateSession();
        expect(await rawList(gateways[1], owner.raw, sessionId)).toEqual({ status: 404, code: "mcp_session_not_found" });
        await refusedOnBoth(owner.raw, sessionId);
        const deleted = await store.db.selectFrom("mcp_sessions").selectAll().where("id", "=", sessionId).executeTakeFirstOrThrow();
        expect(deleted.close_reason).toBe("deleted by the client");

        // Per-key limit 2 across processes: s1 on the first, s2 on the second, s1 used later on the
        // second; a third session closes s2, the least recently used, on both processes.
        const limited = await newKey();
        const s1 = await connect(limited.raw, () => 0);
        const s2 = await connect(limited.raw, () => 1);
        await new Promise((resolve) => setTimeout(resolve, 20));
        expect(await rawList(gateways[1], limited.raw, s1.transport.sessionId!)).toEqual({ status: 200, code: null });
        const s3 = await connect(limited.raw, () => 0);
        await refusedOnBoth(limited.raw, s2.transport.sessionId!);
        for (const s of [s1, s3]) for (const gateway of gateways) expect(await rawList(gateway, limited.raw, s.transport.sessionId!)).toEqual({ status: 200, code: null });
        const closedByLimit = await store.db.selectFrom("mcp_sessions").select("close_reason").where("id", "=", s2.transport.sessionId!).executeTakeFirstOrThrow();
        expect(closedByLimit.close_reason).toBe("key's session limit");

        // A reload's list_changed reaches the GET stream, held by the second process.
        const watcher = await connect((await newKey()).raw, initializeOnFirst);
        let changed = 0;
        watcher.client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (changed += 1));
        await watcher.client.listTools();
        await waitFor(
          () => watcher.streams.gets > 0,
          10_000,
          () => "the client's GET stream never opened",
        );
        // The GET reaches the second process a moment after it was sent (its head only comes with the
        // first event): reloads, each changing the server list, until one's list_changed arrives.
        for (let reload = 1; changed === 0; reload++) {
          if (reload > 10) throw new Error("no tools/list_changed on the GET stream after 10 reloads");
          writeFileSync(configPath, config(notes, reload % 2 === 1));
          for (const gateway of gateways) gateway.child.kill("SIGHUP");
          const deadline = Date.now() + 3_000;
          while (changed === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
        }
        writeFileSync(configPath, config(notes, true));
        for (const gateway of gateways) gateway.child.kill("SIGHUP");
        await waitFor(
          async () => (await watcher.client.listTools()).tools.some((t) => t.name === "other__add"),
          15_000,
          () => "other__add never listed after the reload",
        );
        expect((await watcher.client.listTools()).tools.map((t) => t.name)).toContain("other__add");

        // A workspace's allowlist, set before its key is first used: the second process hides and refuses.
        const team = await store.workspaces.create(`Team ${kind}`, account.id);
        await store.workspaceBudgets.setPolicy(team.id, { allowedMcp: ["notes__add"] });
        const member = await store.keys.create({ accountId: account.id, workspaceId: team.id });
        const teamClient = await connect(member.raw, initializeOnFirst);
        expect((await teamClient.client.listTools()).tools.map((t) => t.name)).toEqual(["notes__add"]);
        const notAllowed = await errorOf(teamClient.client.callTool({ name: "other__add", arguments: { a: 1, b: 2 } }));
        expect(notAllowed?.message).toMatch(/workspace's MCP allowlist/);
        expect(notAllowed?.data).toEqual({ type: "forbidden", code: "mcp_not_allowed" });

        // rpm 10 on the key: 30 calls at once, alternating processes; exactly 10 admitted.
        const rpmKey = await newKey({ requests_per_minute: 10 });
        let turn = 0;
        const busy = await connect(rpmKey.raw, (method, body) => (method === "POST" && body.includes('"method":"initialize"') ? 0 : turn++ % 2));
        const calls = await Promise.all(Array.from({ length: 30 }, (_, i) => errorOf(busy.client.callTool({ name: "notes__add", arguments: { a: i, b: 1 } }))));
        expect(calls.filter((e) => e === null)).toHaveLength(10);
        const refusals = calls.filter((e) => e !== null);
        expect(refusals).toHaveLength(20);
        for (const refusal of refusals) expect(refusal.data).toMatchObject({ type: "rate_limit_error", code: "key_rpm_exceeded" });
        await waitFor(
          async () => {
            const rows = await store.db.selectFrom("request_log").select("status").where("key_id", "=", rpmKey.key.id).where("route", "=", "mcp/tools/call").execute();
            return rows.length === 30 && rows.filter((r) => Number(r.status) === 429).length === 20;
          },
          15_000,
          () => "the request log does not hold the 30 calls, 20 of them refused",
        );

        // Idle: unused for session_idle_s, refused by both processes.
        const idleKey = await newKey();
        const idle = await connect(idleKey.raw, initializeOnFirst);
        await idle.client.listTools();
        await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1000 + 1_500));
        const idleId = idle.transport.sessionId!;
        for (const gateway of gateways) expect(await rawList(gateway, idleKey.raw, idleId)).toEqual({ status: 404, code: "mcp_session_not_found" });
        const expired = await store.db.selectFrom("mcp_sessions").select("close_reason").where("id", "=", idleId).executeTakeFirstOrThrow();
        expect(expired.close_reason).toBe("idle");
      } finally {
        for (const c of clients) await c.close().catch(() => undefined);
        killAll();
        await store.close();
        await notes.close();
        await database.drop();
      }
    });
  });
}
