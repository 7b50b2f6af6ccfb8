// The compatibility matrix's MCP part: real MCP clients (the official SDK client, Claude Code) in
// front of one gateway's /mcp, which serves a stdio server it supervises (the official "everything"
// server) and a remote streamable HTTP server (the tests' own), plus one dead server of each kind.
// Each cell is checked on both ends: what the client got, and what the server answers a direct
// client of its own (its tools, prompts, resources), what it received (the HTTP server records its
// tool calls) or what the gateway's request log recorded. One gateway, one run per client: the SDK
// client's sessions and a single Claude Code process (three turns) cover every cell.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client as SdkClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { startGateway, type TestGateway } from "../../support/gateway.js";
import { EVERYTHING_SERVER, startHttpMcpServer, type HttpMcpServer } from "../../support/mcp-servers.js";
import { UNAVAILABLE_META } from "../../../src/mcp/session-server.js";
import { UPSTREAM_CLIENT_CAPABILITIES } from "../../../src/mcp/upstream-peers.js";
import { tempDir, type ProxyTrap } from "../support.js";
import { CellFailure, check, claude, installedVersion, jsonLines, runSummary } from "./agents.js";
import { anthropicUpstream, type MatrixUpstream, type SeenUpstream } from "./upstreams.js";
import type { Cell } from "./report.js";

export const MCP_SERVER_KINDS = [
  { id: "stdio", name: `stdio server the gateway supervises (server-everything ${installedVersion("@modelcontextprotocol/server-everything")})` },
  { id: "http", name: "Remote streamable HTTP server (made with the SDK)" },
] as const;
export type McpServerKind = (typeof MCP_SERVER_KINDS)[number]["id"];

export const MCP_FEATURES = [
  { id: "tools-list", name: "Tools listed" },
  { id: "tool-call", name: "Tool called" },
  { id: "prompts", name: "Prompts (list + get)" },
  { id: "resources", name: "Resources (list + read)" },
  { id: "allowlist", name: "Allowlist" },
  { id: "dead-server", name: "Dead server" },
  { id: "request-log", name: "Request log" },
] as const;
export type McpFeature = (typeof MCP_FEATURES)[number]["id"];

export type McpResults = Record<McpServerKind, Record<McpFeature, Cell>>;

export interface McpClient {
  id: string;
  name: string;
  packages: string[];
  /** Runs the client's sessions and checks every cell; a failing check's reason goes to `failures`. */
  run(rig: McpRig, failures: string[]): Promise<McpResults>;
}

/** What the matrix does with each server kind: the gateway's names and one of each thing to use. */
interface KindPlan {
  server: string;
  dead: string;
  tool: string;
  args: Record<string, unknown>;
  /** What the tool's answer holds, which only the server could have made from the arguments. */
  answer: string;
  /** A tool of the server the limited key does not allow. */
  refused: string;
  refusedArgs: Record<string, unknown>;
  prompt: string;
  promptArgs: Record<string, string>;
}

// Distinctive arguments, so that the request log's rows can be checked not to hold them.
const ECHO_MARKER = "MCP-MATRIX-4471";
const ADDEND = 918273645;

const PLANS: Record<McpServerKind, KindPlan> = {
  stdio: {
    server: "everything",
    dead: "deadstdio",
    tool: "echo",
    args: { message: ECHO_MARKER },
    answer: `Echo: ${ECHO_MARKER}`,
    refused: "get-sum",
    refusedArgs: { a: 1, b: 2 },
    prompt: "simple-prompt",
    promptArgs: {},
  },
  http: {
    server: "notes",
    dead: "deadhttp",
    tool: "add",
    args: { a: ADDEND, b: 1 },
    answer: String(ADDEND + 1),
    refused: "broken",
    refusedArgs: {},
    prompt: "greet",
    promptArgs: { who: "Ada" },
  },
};
const ARGUMENT_MARKERS = [ECHO_MARKER, String(ADDEND)];

/** What a server itself answers a direct client: the truth the gateway's answers are checked against. */
interface ServerTruth {
  tools: string[];
  prompts: string[];
  /** The texts of the plan's prompt's messages. */
  promptTexts: string[];
  resources: string[];
  /** One resource and its text. */
  resource: { uri: string; text: string };
}

export interface McpRig {
  gateway: TestGateway;
  upstream: MatrixUpstream;
  notes: HttpMcpServer;
  proxy: ProxyTrap;
  truth: Record<McpServerKind, ServerTruth>;
  /** Allows one tool of each live server and nothing else. */
  limitedAllowlist: string[];
  close(): Promise<void>;
}

const kindsOf = <T>(make: (kind: McpServerKind) => T): Record<McpServerKind, T> => ({ stdio: make("stdio"), http: make("http") });
const textOf = (content: unknown): string =>
  (Array.isArray(content) ? (content as Array<{ text?: unknown }>) : [content as { text?: unknown }]).map((c) => (typeof c?.text === "string" ? c.text : "")).join("\n");

async function serverTruth(transport: Transport, plan: KindPlan): Promise<ServerTruth> {
  // The capabilities the gateway declares upstream: the everything server offers some tools only to a client with them.
  const client = new SdkClient({ name: "matrix-truth", version: "1" }, { capabilities: UPSTREAM_CLIENT_CAPABILITIES });
  await client.connect(transport);
  try {
    const resources = (await client.listResources()).resources.map((r) => r.uri);
    const uri = resources[0]!;
    const read = await client.readResource({ uri });
    const prompt = await client.getPrompt({ name: plan.prompt, arguments: plan.promptArgs });
    return {
      tools: (await client.listTools()).tools.map((t) => t.name),
      prompts: (await client.listPrompts()).prompts.map((p) => p.name),
      promptTexts: prompt.messages.map((m) => textOf(m.content)),
      resources,
      resource: { uri, text: textOf(read.contents[0]) },
    };
  } finally {
    await client.close();
  }
}

export const CLAUDE_MODEL = "mcp-claude-code";

/** One gateway for the whole MCP part: the two live servers, the two dead ones, and a model for Claude Code. */
export async function startMcpRig(proxy: ProxyTrap): Promise<McpRig> {
  const notes = await startHttpMcpServer(`mtx${Date.now().toString(36)}`);
  const upstream = await anthropicUpstream();
  const gateway = await startGateway(
    `${upstream.config([CLAUDE_MODEL])}tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
mcp:
  servers:
    - name: everything
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(EVERYTHING_SERVER)}, "stdio"]
    - name: notes
      url: ${JSON.stringify(notes.url)}
      headers: { Authorization: "Bearer \${NOTES_TOKEN}" }
    - name: deadstdio
      command: ${JSON.stringify(process.execPath)}
      args: ["-e", "process.exit(3)"]
      connect_timeout_ms: 2000
    - name: deadhttp
      url: "http://127.0.0.1:9/mcp"
      connect_timeout_ms: 2000
`,
    { env: { NOTES_TOKEN: notes.token } },
  );
  const truth = {
    stdio: await serverTruth(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING_SERVER, "stdio"], stderr: "ignore" }), PLANS.stdio),
    http: await serverTruth(new StreamableHTTPClientTransport(new URL(notes.url), { requestInit: { headers: { authorization: `Bearer ${notes.token}` } } }), PLANS.http),
  };
  return {
    gateway,
    upstream,
    notes,
    proxy,
    truth,
    limitedAllowlist: Object.values(PLANS).map((plan) => `${plan.server}__${plan.tool}`),
    close: async () => {
      await gateway.close();
      await upstream.close();
      await notes.close();
    },
  };
}

/** A funded key of its own for each client's session, so its request log rows are told apart. */
async function keyWith(rig: McpRig, allowedMcp?: string[]): Promise<{ raw: string; keyId: string }> {
  const { key, raw } = await rig.gateway.createAccount({ balance: "10" });
  if (allowedMcp) await rig.gateway.app.ctx.store.keys.setPolicy(key.id, { allowedMcp });
  return { raw, keyId: key.id };
}

interface LogRow {
  route: string;
  provider: string | null;
  model: string | null;
  status: number;
}

async function mcpCallRows(rig: McpRig, keyId: string): Promise<{ rows: LogRow[]; stored: string }> {
  await rig.gateway.app.ctx.pipeline.requestLog!.flush();
  const rows = await rig.gateway.app.ctx.store.db.selectFrom("request_log").selectAll().where("key_id", "=", keyId).where("route", "like", "mcp/%").execute();
  return {
    rows: rows.map((r) => ({ route: r.route, provider: r.provider, model: r.model, status: Number(r.status) })),
    stored: JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v)),
  };
}

/** The request log holds the call of the kind's tool, with its server, tool and status, and no arguments. */
async function checkCallLogged(rig: McpRig, keyId: string, kind: McpServerKind): Promise<void> {
  const plan = PLANS[kind];
  const { rows, stored } = await mcpCallRows(rig, keyId);
  const calls = rows.filter((r) => r.route === "mcp/tools/call" && r.provider === plan.server);
  check(
    calls.length === 1 && calls[0]!.model === plan.tool && calls[0]!.status === 200,
    `request log rows of ${plan.server}: ${JSON.stringify(calls)}, expected one ${plan.tool} with status 200`,
  );
  for (const marker of ARGUMENT_MARKERS) check(!stored.includes(marker), "the request log holds a call's arguments");
}

/** The refused call never reached the server: the HTTP server saw no call to it, and the log has no such call. */
async function checkNeverReached(rig: McpRig, keyId: string, kind: McpServerKind): Promise<void> {
  const plan = PLANS[kind];
  if (kind === "http") check(!rig.notes.calls.some((c) => c.tool === plan.refused), `the HTTP server received a call to ${plan.refused}`);
  const { rows } = await mcpCallRows(rig, keyId);
  check(!rows.some((r) => r.model === plan.refused && r.status === 200), `the request log has a call to ${plan.refused} that went through`);
}

const sameSet = (got: string[], expected: string[]) => JSON.stringify([...new Set(got)].sort()) === JSON.stringify([...new Set(expected)].sort());
const prefixed = (kind: McpServerKind, names: string[], prefix = "") => names.map((n) => `${prefix}${PLANS[kind].server}__${n}`);
const gatewayUri = (kind: McpServerKind, uri: string) => `mcp-gw://${PLANS[kind].server}/${uri}`;

/** Runs each cell's check; a failure is the cell's `fail`, with its reason in the test log. */
async function checkCells(clientId: string, failures: string[], checks: Record<McpFeature, (kind: McpServerKind) => Promise<void> | void>): Promise<McpResults> {
  const results = kindsOf(() => ({}) as Record<McpFeature, Cell>);
  for (const { id: kind } of MCP_SERVER_KINDS) {
    for (const { id: feature } of MCP_FEATURES) {
      try {
        await checks[feature](kind);
        results[kind][feature] = { status: "pass" };
      } catch (error) {
        failures.push(`${clientId} × mcp ${kind} × ${feature}: ${(error instanceof Error ? error.message : String(error)).slice(0, 600)}`);
        results[kind][feature] = { status: "fail" };
      }
    }
  }
  return results;
}

/** The outcome of a call that is expected to fail: its error message, or a CellFailure when it succeeded. */
async function refusal(call: Promise<unknown>, what: string): Promise<string> {
  const outcome = await call.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new CellFailure(`${what} succeeded: ${JSON.stringify(outcome.value).slice(0, 300)}`);
  return outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
}

// ---------------------------------------------------------------- the official SDK client

async function connectSdk(rig: McpRig, key: string): Promise<SdkClient> {
  const client = new SdkClient({ name: "matrix-sdk-client", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${rig.gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  return client;
}

export const sdkMcpClient: McpClient = {
  id: "mcp-sdk",
  name: "MCP TypeScript SDK client (streamable HTTP)",
  packages: ["@modelcontextprotocol/sdk"],
  async run(rig, failures) {
    const full = await keyWith(rig);
    const limited = await keyWith(rig, rig.limitedAllowlist);
    const dead = await keyWith(
      rig,
      Object.values(PLANS).map((plan) => plan.dead),
    );
    const client = await connectSdk(rig, full.raw);
    const limitedClient = await connectSdk(rig, limited.raw);
    const deadClient = await connectSdk(rig, dead.raw);
    try {
      const listing = await client.listTools();
      const tools = listing.tools.map((t) => t.name);
      const unavailable = (listing._meta?.[UNAVAILABLE_META] ?? []) as Array<{ server: string; reason: string }>;
      const calls = kindsOf((kind) => client.callTool({ name: `${PLANS[kind].server}__${PLANS[kind].tool}`, arguments: PLANS[kind].args }));
      const prompts = (await client.listPrompts()).prompts.map((p) => p.name);
      const resources = (await client.listResources()).resources.map((r) => r.uri);
      const limitedTools = (await limitedClient.listTools()).tools.map((t) => t.name);
      const deadListing = await refusal(deadClient.listTools(), "listing the tools of dead servers only");

      return await checkCells(this.id, failures, {
        "tools-list": (kind) => {
          const mine = tools.filter((t) => t.startsWith(`${PLANS[kind].server}__`));
          check(sameSet(mine, prefixed(kind, rig.truth[kind].tools)), `listed ${JSON.stringify(mine)}, the server has ${JSON.stringify(rig.truth[kind].tools)}`);
        },
        "tool-call": async (kind) => {
          const result = await calls[kind];
          check(textOf(result.content) === PLANS[kind].answer, `the call answered ${JSON.stringify(result.content)}`);
          if (kind === "http")
            check(
              rig.notes.calls.some((c) => c.tool === "add" && (c.args as { a?: number }).a === ADDEND),
              "the HTTP server received no such call",
            );
        },
        prompts: async (kind) => {
          const mine = prompts.filter((p) => p.startsWith(`${PLANS[kind].server}__`));
          check(sameSet(mine, prefixed(kind, rig.truth[kind].prompts)), `listed ${JSON.stringify(mine)}, the server has ${JSON.stringify(rig.truth[kind].prompts)}`);
          const got = await client.getPrompt({ name: `${PLANS[kind].server}__${PLANS[kind].prompt}`, arguments: PLANS[kind].promptArgs });
          const texts = got.messages.map((m) => textOf(m.content));
          check(JSON.stringify(texts) === JSON.stringify(rig.truth[kind].promptTexts), `the prompt came back as ${JSON.stringify(texts).slice(0, 300)}`);
        },
        resources: async (kind) => {
          const { uri, text } = rig.truth[kind].resource;
          const mine = resources.filter((r) => r.startsWith(gatewayUri(kind, "")));
          check(mine.includes(gatewayUri(kind, uri)), `listed ${JSON.stringify(mine.slice(0, 5))}…, not ${gatewayUri(kind, uri)}`);
          const stray = mine.filter((r) => !rig.truth[kind].resources.map((u) => gatewayUri(kind, u)).includes(r));
          check(stray.length === 0, `listed resources the server does not have: ${JSON.stringify(stray.slice(0, 3))}`);
          const read = await client.readResource({ uri: gatewayUri(kind, uri) });
          check(read.contents[0]?.uri === gatewayUri(kind, uri) && textOf(read.contents[0]) === text, `read ${JSON.stringify(read.contents).slice(0, 300)}`);
        },
        allowlist: async (kind) => {
          const plan = PLANS[kind];
          const mine = limitedTools.filter((t) => t.startsWith(`${plan.server}__`));
          check(sameSet(mine, [`${plan.server}__${plan.tool}`]), `the limited key was listed ${JSON.stringify(mine)}`);
          const message = await refusal(limitedClient.callTool({ name: `${plan.server}__${plan.refused}`, arguments: plan.refusedArgs }), "calling a tool the key does not allow");
          check(/not allowed for this key/.test(message), `refused with ${JSON.stringify(message)}`);
          await checkNeverReached(rig, limited.keyId, kind);
        },
        "dead-server": async (kind) => {
          const plan = PLANS[kind];
          check(new RegExp(`No MCP server could list its tools: .*${plan.dead}: `).test(deadListing), `listing dead servers only: ${JSON.stringify(deadListing)}`);
          check(
            unavailable.some((u) => u.server === plan.dead) && tools.some((t) => t.startsWith(`${plan.server}__`)),
            `a listing with live and dead servers reported unavailable ${JSON.stringify(unavailable)}`,
          );
          const message = await refusal(deadClient.callTool({ name: `${plan.dead}__anything`, arguments: {} }), "calling a tool of a dead server");
          check(message.includes(`MCP server ${plan.dead} is unavailable`), `the call was refused with ${JSON.stringify(message)}`);
        },
        "request-log": (kind) => checkCallLogged(rig, full.keyId, kind),
      });
    } finally {
      for (const c of [client, limitedClient, deadClient]) await c.close().catch(() => undefined);
    }
  },
};

// ---------------------------------------------------------------- Claude Code

const CHECK_TURN = "Run the MCP matrix checks.";

interface ToolStep {
  id: string;
  name: string;
  args: object;
}

/** The tools the mock model asks Claude Code to call in the last turn, in order. */
function toolSteps(rig: McpRig): ToolStep[] {
  const steps: ToolStep[] = [];
  for (const { id: kind } of MCP_SERVER_KINDS) {
    const plan = PLANS[kind];
    steps.push({ id: `call_${kind}`, name: `mcp__gw__${plan.server}__${plan.tool}`, args: plan.args });
    steps.push({ id: `read_${kind}`, name: "ReadMcpResourceTool", args: { server: "gw", uri: gatewayUri(kind, rig.truth[kind].resource.uri) } });
    steps.push({ id: `refused_${kind}`, name: `mcp__gwlimited__${plan.server}__${plan.refused}`, args: plan.refusedArgs });
  }
  steps.push({ id: "list_resources", name: "ListMcpResourcesTool", args: { server: "gw" } });
  return steps;
}

interface ToolResult {
  text: string;
  isError: boolean;
}

/** Tool results Claude Code sent back to the model, by tool call id. */
function toolResults(seen: SeenUpstream[]): Map<string, ToolResult> {
  const results = new Map<string, ToolResult>();
  for (const request of seen) {
    const messages = (request.body as { messages?: Array<{ content: unknown }> }).messages ?? [];
    for (const block of messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : []))) {
      if (block.type !== "tool_result") continue;
      const text = typeof block.content === "string" ? block.content : textOf(block.content);
      results.set(String(block.tool_use_id), { text, isError: block.is_error === true });
    }
  }
  return results;
}

const userTurn = (text: string) => JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "text", text }] } });

export const claudeCodeMcpClient: McpClient = {
  id: "claude-code",
  name: "Claude Code (headless, --mcp-config)",
  packages: ["@anthropic-ai/claude-code"],
  async run(rig, failures) {
    const full = await keyWith(rig);
    const limited = await keyWith(rig, rig.limitedAllowlist);
    const dead = await keyWith(
      rig,
      Object.values(PLANS).map((plan) => plan.dead),
    );
    const home = tempDir("matrix-claude-mcp-");
    mkdirSync(join(home, ".claude"), { recursive: true });
    const config = join(home, "mcp.json");
    const entry = (key: string) => ({ type: "http", url: `${rig.gateway.url}/mcp`, headers: { Authorization: `Bearer ${key}` } });
    writeFileSync(config, JSON.stringify({ mcpServers: { gw: entry(full.raw), gwlimited: entry(limited.raw), gwdead: entry(dead.raw) } }));
    const debugLog = join(home, "debug.log");

    const addCalls = () => rig.notes.calls.filter((c) => (c.args as { a?: number }).a === ADDEND).length;
    const addCallsBefore = addCalls();
    const steps = toolSteps(rig);
    rig.upstream.seen.delete(CLAUDE_MODEL);
    rig.upstream.scripts.set(CLAUDE_MODEL, (request) => {
      if (!JSON.stringify(request.body).includes(CHECK_TURN)) return { text: ["ok"] };
      const next = steps[request.toolResults.length];
      return next ? { text: [], toolCall: next } : { text: ["done"] };
    });
    // Each MCP prompt is a slash command of its own turn; the last turn drives the tool calls.
    const input = [
      ...MCP_SERVER_KINDS.map(({ id: kind }) => `/mcp__gw__${PLANS[kind].server}__${PLANS[kind].prompt} ${Object.values(PLANS[kind].promptArgs).join(" ")}`.trim()),
      CHECK_TURN,
    ]
      .map(userTurn)
      .join("\n");
    const ctx = { gatewayUrl: rig.gateway.url, key: full.raw, model: CLAUDE_MODEL, upstream: rig.upstream, proxy: rig.proxy };
    const run = await claude(ctx, {
      args: [
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--mcp-config",
        config,
        "--strict-mcp-config",
        "--allowedTools",
        "mcp__gw,mcp__gwlimited,ListMcpResourcesTool,ReadMcpResourceTool",
        "--debug-file",
        debugLog,
      ],
      input: `${input}\n`,
    });
    const lines = jsonLines(run.stdout);
    const finished = lines.filter((l) => l.type === "result");
    const seen = rig.upstream.seen.get(CLAUDE_MODEL) ?? [];
    const results = toolResults(seen);
    // The last init event: Claude Code's tools and slash commands once its MCP servers connected.
    const init = lines.findLast((l) => l.type === "system" && l.subtype === "init") ?? {};
    const tools = (init.tools ?? []) as string[];
    const commands = (init.slash_commands ?? []) as string[];
    let debug = "";
    try {
      debug = readFileSync(debugLog, "utf8");
    } catch {
      // no debug log written: the dead-server cells say so
    }
    const ran = () =>
      check(run.code === 0 && finished.length === 3 && finished.every((r) => r.is_error === false), `Claude Code did not finish its three turns: ${runSummary(run)}`);
    const result = (id: string): ToolResult => {
      ran();
      const got = results.get(id);
      check(got, `no result of the tool call ${id} went back to the model; ${results.size} results did`);
      return got;
    };

    return checkCells(this.id, failures, {
      "tools-list": (kind) => {
        ran();
        const mine = tools.filter((t) => t.startsWith(`mcp__gw__${PLANS[kind].server}__`));
        check(
          sameSet(mine, prefixed(kind, rig.truth[kind].tools, "mcp__gw__")),
          `Claude Code has ${JSON.stringify(mine)}, the server has ${JSON.stringify(rig.truth[kind].tools)}`,
        );
        const offered = seen.flatMap((s) => ((s.body as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name));
        check(offered.includes(`mcp__gw__${PLANS[kind].server}__${PLANS[kind].tool}`), "the model was never offered the server's tools");
      },
      "tool-call": (kind) => {
        const got = result(`call_${kind}`);
        check(!got.isError && got.text.includes(PLANS[kind].answer), `the tool answered ${JSON.stringify(got)}`);
        if (kind === "http") check(addCalls() > addCallsBefore, "the HTTP server received no call from Claude Code");
      },
      prompts: (kind) => {
        ran();
        const mine = commands.filter((c) => c.startsWith(`mcp__gw__${PLANS[kind].server}__`));
        check(
          sameSet(mine, prefixed(kind, rig.truth[kind].prompts, "mcp__gw__")),
          `Claude Code's slash commands of the server: ${JSON.stringify(mine)}, its prompts: ${JSON.stringify(rig.truth[kind].prompts)}`,
        );
        const sent = seen.map((s) => JSON.stringify(s.body));
        for (const text of rig.truth[kind].promptTexts)
          check(
            sent.some((body) => body.includes(JSON.stringify(text).slice(1, -1))),
            `the prompt's text ${JSON.stringify(text)} never reached the model`,
          );
      },
      resources: (kind) => {
        const { uri, text } = rig.truth[kind].resource;
        const read = result(`read_${kind}`);
        check(!read.isError && read.text.includes(JSON.stringify(text).slice(1, -1)), `reading ${uri} answered ${read.text.slice(0, 300)}`);
        const listed = result("list_resources");
        check(listed.text.includes(gatewayUri(kind, uri)), `the resource list lacks ${gatewayUri(kind, uri)}: ${listed.text.slice(0, 300)}`);
      },
      allowlist: async (kind) => {
        ran();
        const plan = PLANS[kind];
        const mine = tools.filter((t) => t.startsWith(`mcp__gwlimited__${plan.server}__`));
        check(sameSet(mine, [`mcp__gwlimited__${plan.server}__${plan.tool}`]), `with the limited key Claude Code has ${JSON.stringify(mine)}`);
        const refused = result(`refused_${kind}`);
        check(refused.isError, `the call of a tool the key does not allow answered ${JSON.stringify(refused)}`);
        await checkNeverReached(rig, limited.keyId, kind);
      },
      "dead-server": (kind) => {
        ran();
        const plan = PLANS[kind];
        check(!tools.some((t) => t.startsWith("mcp__gwdead__")), "Claude Code lists tools of the dead servers");
        const failed = debug.split("\n").find((l) => l.includes('MCP server "gwdead" Failed to fetch tools'));
        check(failed, `Claude Code's debug log has no failed tool listing of the dead servers (${debug.length} bytes)`);
        check(new RegExp(`No MCP server could list its tools: .*${plan.dead}: `).test(failed), `Claude Code was told ${JSON.stringify(failed)}`);
      },
      "request-log": (kind) => {
        ran();
        return checkCallLogged(rig, full.keyId, kind);
      },
    });
  },
};

export const MCP_CLIENTS: McpClient[] = [sdkMcpClient, claudeCodeMcpClient];
