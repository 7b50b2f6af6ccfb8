// What the MCP gateway forwards beyond lists and calls, with the official SDK client through /mcp in
// front of the "everything" server (stdio) and a stateful HTTP server made with the SDK ("desk"):
// resource subscriptions (updates reach only the subscribed session, stop on unsubscribe, are
// bounded per session, refused by a server without them), completions, the upstream's requests made
// during a call (sampling, elicitation, roots) answered by the calling client, progress and logging
// for the call, and an error, not a hang, for a client without the capability. A canary in the
// upstream URLs and headers never reaches a client. On SQLite and PostgreSQL.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  type ClientCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { CALL_META } from "../../src/mcp/upstream-peers.js";
import { MAX_SUBSCRIPTIONS_PER_SESSION } from "../../src/mcp/session-extras.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { startDeskMcpServer, type DeskMcpServer } from "../support/mcp-desk-server.js";
import { EVERYTHING_SERVER, startHttpMcpServer, type HttpMcpServer } from "../support/mcp-servers.js";

const CANARY = `cnry${randomBytes(6).toString("hex")}`;
const FULL: ClientCapabilities = { sampling: {}, elicitation: {}, roots: {} };

/** Polls `check` until it holds (at most ~5 s): notifications arrive on their own stream. */
async function eventually(check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(check()).toBe(true);
}

describe.each(DATABASE_KINDS)("MCP forwarding (%s)", (kind) => {
  let desk: DeskMcpServer;
  let notes: HttpMcpServer;
  let gateway: TestGateway;
  const seen: string[] = [];
  const clients: Client[] = [];

  interface Connected {
    client: Client;
    updated: string[];
    logs: string[];
    requests: unknown[];
    /** Ends the session (DELETE /mcp), as a client that leaves does. */
    end(): Promise<void>;
  }

  /** A client of the gateway; with `capabilities`, it answers sampling "<name> sampled", elicitation and roots. */
  async function connect(key: string, name: string, capabilities: ClientCapabilities = {}): Promise<Connected> {
    const client = new Client({ name, version: "1" }, { capabilities });
    const connected: Connected = { client, updated: [], logs: [], requests: [], end: async () => {} };
    if (capabilities.sampling)
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        connected.requests.push(request);
        return { model: "test", role: "assistant", content: { type: "text", text: `${name} sampled` } };
      });
    if (capabilities.elicitation)
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        connected.requests.push(request);
        return { action: "accept", content: { name: "Ada" } };
      });
    if (capabilities.roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: "file:///work/project", name: "project" }] }));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void connected.updated.push(n.params.uri));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void connected.logs.push(JSON.stringify(n.params)));
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        if ((response.headers.get("content-type") ?? "").includes("text/event-stream") && response.body !== null) {
          // An SSE stream (a call's, or the GET stream that stays open) is recorded as it arrives.
          const [recorded, passed] = response.body.tee();
          const slot = seen.push("") - 1;
          void (async () => {
            const decoder = new TextDecoder();
            for await (const chunk of recorded) seen[slot] += decoder.decode(chunk, { stream: true });
          })().catch(() => undefined);
          return new Response(passed, { status: response.status, statusText: response.statusText, headers: response.headers });
        }
        const text = await response.text();
        seen.push(JSON.stringify([...response.headers]), text);
        return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
      },
    });
    await client.connect(transport);
    connected.end = async () => {
      await transport.terminateSession();
      await client.close();
    };
    clients.push(client);
    return connected;
  }

  const text = (result: object) => ((result as { content?: Array<{ text?: string }> }).content ?? []).map((c) => c.text ?? "").join("\n");

  beforeAll(async () => {
    desk = await startDeskMcpServer(CANARY);
    notes = await startHttpMcpServer(CANARY);
    gateway = await startGateway(
      `${mockConfig({ openaiUrl: "http://127.0.0.1:9" })}
mcp:
  servers:
    - name: everything
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(EVERYTHING_SERVER)}, "stdio"]
    - name: desk
      url: ${JSON.stringify(desk.url)}
      headers: { Authorization: "Bearer \${DESK_TOKEN}" }
      call_timeout_ms: 120000
    - name: notes
      url: ${JSON.stringify(notes.url)}
      headers: { Authorization: "Bearer \${NOTES_TOKEN}" }
`,
      { kind, env: { DESK_TOKEN: desk.token, NOTES_TOKEN: notes.token } },
    );
  });

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    await gateway?.close();
    await desk?.close();
    await notes?.close();
  });

  it("subscriptions: updates reach only the subscribed session, until it unsubscribes; the server is subscribed once", async () => {
    const { raw } = await gateway.createAccount({ balance: "10" });
    const a = await connect(raw, "a");
    const b = await connect(raw, "b");
    const c = await connect(raw, "c");
    expect(a.client.getServerCapabilities()?.resources?.subscribe).toBe(true);
    expect(a.client.getServerCapabilities()?.completions).toBeDefined();
    const uri = "mcp-gw://desk/desk://doc/alpha";
    await a.client.subscribeResource({ uri });
    await c.client.subscribeResource({ uri });
    expect([...desk.subscribed]).toEqual(["desk://doc/alpha"]);
    await b.client.callTool({ name: "desk__touch", arguments: { uri: "desk://doc/alpha" } });
    await eventually(() => a.updated.length === 1 && c.updated.length === 1);
    expect(a.updated).toEqual([uri]);
    expect(b.updated).toEqual([]);

    await a.client.unsubscribeResource({ uri });
    expect(desk.subscribed.has("desk://doc/alpha")).toBe(true); // c still listens
    await c.end();
    await eventually(() => !desk.subscribed.has("desk://doc/alpha"));
    expect(desk.subscriptionLog.filter((l) => l.endsWith("desk://doc/alpha"))).toEqual(["subscribe desk://doc/alpha", "unsubscribe desk://doc/alpha"]);
    await a.client.subscribeResource({ uri: "mcp-gw://desk/desk://doc/beta" });
    await b.client.callTool({ name: "desk__touch", arguments: { uri: "desk://doc/beta" } });
    await eventually(() => a.updated.length === 2);
    expect(a.updated).toEqual([uri, "mcp-gw://desk/desk://doc/beta"]); // nothing more for alpha
  });

  it("subscriptions on the stdio everything server, a bound per session, and a server without them refused", async () => {
    const { raw } = await gateway.createAccount({ balance: "10" });
    const a = await connect(raw, "a");
    const listed = (await a.client.listResources()).resources.map((r) => r.uri);
    const uri = listed.find((u) => u.startsWith("mcp-gw://everything/"))!;
    await a.client.subscribeResource({ uri });
    await a.client.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
    await eventually(() => a.updated.includes(uri));
    await a.client.callTool({ name: "everything__toggle-subscriber-updates", arguments: {} });
    await a.client.unsubscribeResource({ uri });

    const refused = await a.client.subscribeResource({ uri: "mcp-gw://notes/notes://one" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).message).toContain("notes does not support resource subscriptions");

    for (let i = 0; i < MAX_SUBSCRIPTIONS_PER_SESSION; i++) await a.client.subscribeResource({ uri: `mcp-gw://desk/desk://doc/n${i}` });
    const over = await a.client.subscribeResource({ uri: "mcp-gw://desk/desk://doc/one-more" }).catch((e: unknown) => e);
    expect((over as McpError).message).toContain(`at most ${MAX_SUBSCRIPTIONS_PER_SESSION} resource subscriptions`);
    await a.end();
    await eventually(() => ![...desk.subscribed].some((u) => u.startsWith("desk://doc/n")));
  });

  it("an allowlist that leaves a server out refuses its subscriptions and completions", async () => {
    const { raw, key } = await gateway.createAccount({ balance: "10" });
    await gateway.app.ctx.store.keys.setPolicy(key.id, { allowedMcp: ["everything"] });
    const a = await connect(raw, "a");
    const refused = await a.client.subscribeResource({ uri: "mcp-gw://desk/desk://doc/alpha" }).catch((e: unknown) => e);
    expect((refused as McpError).message).toContain("not in the key's MCP allowlist");
    const completion = await a.client.complete({ ref: { type: "ref/prompt", name: "desk__greet" }, argument: { name: "who", value: "A" } }).catch((e: unknown) => e);
    expect((completion as McpError).message).toContain("not in the key's MCP allowlist");
  });

  it("completes prompt arguments and resource template arguments with the names translated", async () => {
    const { raw } = await gateway.createAccount({ balance: "10" });
    const { client } = await connect(raw, "a");
    const names = await client.complete({ ref: { type: "ref/prompt", name: "desk__greet" }, argument: { name: "who", value: "A" } });
    expect(names.completion.values).toEqual(["Ada", "Alan"]);
    const docs = await client.complete({ ref: { type: "ref/resource", uri: "mcp-gw://desk/desk://doc/{name}" }, argument: { name: "name", value: "b" } });
    expect(docs.completion.values).toEqual(["beta"]);
    const team = await client.complete({
      ref: { type: "ref/prompt", name: "everything__completable-prompt" },
      argument: { name: "name", value: "" },
      context: { arguments: { department: "Sales" } },
    });
    expect(team.completion.values).toEqual(["David", "Eve", "Frank"]);
    const ids = await client.complete({
      ref: { type: "ref/resource", uri: "mcp-gw://everything/demo://resource/dynamic/text/{resourceId}" },
      argument: { name: "resourceId", value: "7" },
    });
    expect(ids.completion.values).toEqual(["7"]);
  });

  it("sampling: the server's request goes to the client whose call made it, with progress and logging for the call", async () => {
    const { raw } = await gateway.createAccount({ balance: "10" });
    const a = await connect(raw, "alice", FULL);
    const b = await connect(raw, "bob", FULL);
    const progressA: number[] = [];
    const progressB: number[] = [];
    // Both at once over HTTP: each server request is matched to its own call.
    const [ra, rb] = await Promise.all([
      a.client.callTool({ name: "desk__ask", arguments: { question: "q1" } }, undefined, { onprogress: (p) => void progressA.push(p.progress) }),
      b.client.callTool({ name: "desk__ask", arguments: { question: "q2" } }, undefined, { onprogress: (p) => void progressB.push(p.progress) }),
    ]);
    expect(text(ra)).toBe("answer: alice sampled");
    expect(text(rb)).toBe("answer: bob sampled");
    expect(progressA).toEqual([1, 2]);
    expect(progressB).toEqual([1, 2]);
    expect(a.logs.filter((l) => l.includes("desk asks"))).toHaveLength(1);
    expect(a.logs.join()).not.toContain(CANARY);
    expect(JSON.stringify(a.requests)).not.toContain(CALL_META);

    const stdio = await a.client.callTool({ name: "everything__trigger-sampling-request", arguments: { prompt: "hi", maxTokens: 5 } });
    expect(text(stdio)).toContain("alice sampled");
    const steps: number[] = [];
    const long = await b.client.callTool({ name: "everything__trigger-long-running-operation", arguments: { duration: 0.2, steps: 2 } }, undefined, {
      onprogress: (p) => void steps.push(p.progress),
    });
    expect(text(long)).toContain("completed");
    expect(steps).toEqual([1, 2]);
  });

  it("elicitation and roots reach the calling client and its answers the server", async () => {
    const { raw } = await gateway.createAccount({ balance: "10" });
    const { client } = await connect(raw, "a", FULL);
    expect(text(await client.callTool({ name: "desk__elicit", arguments: {} }))).toBe('accept: {"name":"Ada"}');
    expect(text(await client.callTool({ name: "desk__roots", arguments: {} }))).toBe("file:///work/project");
    expect(text(await client.callTool({ name: "everything__trigger-elicitation-request", arguments: {} }))).toContain("Name: Ada");
    expect(text(await client.callTool({ name: "everything__get-roots-list", arguments: {} }))).toContain("file:///work/project");
  });

  it("a client without the capability: the server gets an MCP error at once, the client an error result, not a hang", async () => {
    const { raw } = await gateway.createAccount({ balance: "10" });
    // The servers' call timeouts (2 min for desk) are far beyond the test's: a wait would fail it.
    const { client } = await connect(raw, "plain");
    const desked = await client.callTool({ name: "desk__ask", arguments: { question: "q" } });
    expect(desked.isError).toBe(true);
    expect(text(desked)).toContain("did not declare the sampling capability");
    const everything = await client.callTool({ name: "everything__trigger-sampling-request", arguments: { prompt: "hi" } });
    expect(everything.isError).toBe(true);
    expect(text(everything)).toContain("did not declare the sampling capability");
    const elicited = await client.callTool({ name: "desk__elicit", arguments: {} });
    expect(text(elicited)).toContain("did not declare the elicitation capability");
  });

  it("no upstream URL or header value reaches a client", () => {
    expect(seen.join("")).toContain("alice sampled");
    for (const body of seen) {
      expect(body).not.toContain(CANARY);
      expect(body).not.toContain(desk.token);
    }
  });
});
