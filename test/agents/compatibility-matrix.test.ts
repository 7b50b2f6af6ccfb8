// The published compatibility matrix: every client (Claude Code, Codex CLI, Gemini CLI, the Vercel AI SDK,
// Google's Gen AI SDK) × every upstream type × every feature, each cell run for real against a gateway in front of that
// type's mock; and its MCP part: MCP clients × kinds of MCP server × MCP features, against one
// gateway's /mcp in front of real MCP servers (matrix/mcp.ts). The run regenerates docs/compatibility.md and docs/compatibility.json and compares
// them with the committed ones: a cell that passed there and fails now is a regression (the test
// fails); any other difference asks for the regenerated files to be committed
// (COMPATIBILITY_WRITE=1 writes them). Cells failing because a feature is not built yet only show
// as "fail" in the table.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { CellFailure, CLIENTS as AGENT_CLIENTS, FEATURES, installedVersion, NotApplicable, type Client, type Feature } from "./matrix/agents.js";
import { geminiCliClient } from "./matrix/gemini-cli-client.js";
import { genaiClient } from "./matrix/genai-client.js";
import { MCP_CLIENTS, MCP_FEATURES, MCP_SERVER_KINDS, startMcpRig, type McpClient, type McpResults, type McpRig } from "./matrix/mcp.js";
import { comparable, regressions, renderJson, renderMarkdown, type Cell, type Matrix } from "./matrix/report.js";
import { UPSTREAM_TYPES as REGISTERED_TYPES } from "../../src/upstreams/registry.js";
import { anthropicUpstream, azureUpstream, bedrockUpstream, geminiUpstream, openaiUpstream, type MatrixUpstream } from "./matrix/upstreams.js";
import { startProxyTrap, type ProxyTrap } from "./support.js";

const JSON_PATH = fileURLToPath(new URL("../../docs/compatibility.json", import.meta.url));
const MD_PATH = fileURLToPath(new URL("../../docs/compatibility.md", import.meta.url));
const WRITE = process.env.COMPATIBILITY_WRITE === "1";
// Two CLI runs at a time on a 2-core machine; the AI SDK cells are in-process and cheap.
const POOL = 3;
const CELL_TIMEOUT_MS = 90_000;
// One MCP client's whole run (the SDK client's sessions, or one Claude Code process of three turns).
const MCP_CLIENT_TIMEOUT_MS = 120_000;

type UpstreamTypeName = (typeof REGISTERED_TYPES)[number];

// The Gemini API client lives in its own module (agents.ts is the agents' and the AI SDK's).
const CLIENTS: Client[] = [...AGENT_CLIENTS, genaiClient, geminiCliClient];

interface UpstreamType {
  id: string;
  name: string;
  /** Why no cell of this type applies, when none does. */
  notApplicable?: string;
  start?: (cellModels: string[]) => Promise<MatrixUpstream>;
}

/**
 * The matrix's columns of each registered upstream type (src/upstreams/registry.ts): a Record over the
 * registry's keys, so a new type does not compile here until it says which columns it has.
 */
const COLUMNS_OF_TYPE: Record<UpstreamTypeName, UpstreamType[]> = {
  openai: [
    { id: "openai-chat", name: "OpenAI-compatible, Chat only", start: () => openaiUpstream(false) },
    { id: "openai-responses", name: "OpenAI with Responses", start: () => openaiUpstream(true) },
  ],
  anthropic: [{ id: "anthropic", name: "Anthropic-native", start: () => anthropicUpstream() }],
  "azure-openai": [{ id: "azure-openai", name: "Azure OpenAI", start: (cells) => azureUpstream(cells) }],
  gemini: [{ id: "gemini", name: "Google Gemini", start: () => geminiUpstream() }],
  bedrock: [{ id: "bedrock", name: "AWS Bedrock (Converse)", start: () => bedrockUpstream() }],
  "google-operations": [
    { id: "google-operations", name: "Google long-running operations", notApplicable: "The google-operations type serves video generation only: no chat model can be on it." },
  ],
  // The demo's answers are made up inside the gateway: clients are checked against it in demo-models.test.ts.
  demo: [],
};
const COLUMN_ORDER: UpstreamTypeName[] = ["openai", "anthropic", "azure-openai", "gemini", "bedrock", "google-operations", "demo"];
const UPSTREAM_TYPES: UpstreamType[] = COLUMN_ORDER.flatMap((type) => COLUMNS_OF_TYPE[type]);

/** Cells a client cannot do whatever the upstream, with the reason. */
const CLIENT_NOT_APPLICABLE: Partial<Record<string, Partial<Record<Feature, string>>>> = {
  "gemini-cli": {
    reasoning: "Gemini CLI's headless output (-p, json and stream-json) prints no thoughts, whatever the model sends.",
  },
  "ai-sdk-openai-chat": {
    reasoning: "The AI SDK's OpenAI Chat model reads no reasoning from a Chat Completions answer (OpenAI's Chat API sends none); its Responses model does.",
  },
};

const cellModel = (client: Client, feature: Feature) => `${client.id}-${feature}`;

function readCommitted(): Matrix | null {
  return existsSync(JSON_PATH) ? (JSON.parse(readFileSync(JSON_PATH, "utf8")) as Matrix) : null;
}

async function pool<T>(tasks: Array<() => Promise<T>>, size: number): Promise<T[]> {
  const results: T[] = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const index = next++;
      results[index] = await tasks[index]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, tasks.length) }, worker));
  return results;
}

/** The error and what an SDK error carries (its cause, the body it could not parse). */
function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const details = error as Error & { responseBody?: string; cause?: unknown };
  const cause = details.cause instanceof Error ? ` (cause: ${details.cause.message.slice(0, 300)})` : "";
  const body = typeof details.responseBody === "string" ? ` body: ${details.responseBody.slice(0, 400)}` : "";
  return `${error.message}${cause}${body}`;
}

/** Runs an MCP client; a run that does not finish fails all its cells. */
async function runMcpClient(client: McpClient, rig: McpRig, failures: string[]): Promise<McpResults> {
  try {
    return await withTimeout(client.run(rig, failures), MCP_CLIENT_TIMEOUT_MS);
  } catch (error) {
    failures.push(`${client.id} × mcp: ${describeError(error).slice(0, 600)}`);
    const failed = () => Object.fromEntries(MCP_FEATURES.map((f) => [f.id, { status: "fail" }])) as McpResults[keyof McpResults];
    return { stdio: failed(), http: failed() };
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new CellFailure(`no outcome within ${ms / 1000} s`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

describe("compatibility matrix", () => {
  it("has the columns of every registered upstream type", () => {
    expect([...COLUMN_ORDER].sort()).toEqual([...REGISTERED_TYPES].sort());
  });

  const gateways: TestGateway[] = [];
  const upstreams: MatrixUpstream[] = [];
  let proxy: ProxyTrap | undefined;
  let mcpRig: McpRig | undefined;
  afterAll(async () => {
    await mcpRig?.close();
    for (const gateway of gateways) await gateway.close();
    for (const upstream of upstreams) await upstream.close();
    await proxy?.close();
  });

  it("runs every cell, and the committed docs/compatibility.{md,json} match the run", async () => {
    proxy = await startProxyTrap();
    const committed = readCommitted();
    const results: Matrix["results"] = {};
    const failures: string[] = [];
    const tasks: Array<() => Promise<void>> = [];
    const record = (client: Client, upstream: string, feature: Feature, cell: Cell) => {
      ((results[client.id] ??= {})[upstream] ??= {})[feature] = cell;
    };

    // The MCP part: one gateway, its clients one after the other (a single task of the pool).
    mcpRig = await startMcpRig(proxy);
    const rig = mcpRig;
    const mcpResults: Record<string, McpResults> = {};
    tasks.push(async () => {
      for (const client of MCP_CLIENTS) {
        // A run that lost a cell passing in the committed matrix gets a second try before it counts.
        for (let attempt = 1; ; attempt++) {
          const runFailures: string[] = [];
          const outcome = await runMcpClient(client, rig, runFailures);
          const lostOne = MCP_SERVER_KINDS.some(({ id: kind }) =>
            MCP_FEATURES.some(({ id: feature }) => committed?.mcp?.results[client.id]?.[kind]?.[feature]?.status === "pass" && outcome[kind][feature].status !== "pass"),
          );
          if (lostOne && attempt === 1) continue;
          failures.push(...runFailures);
          mcpResults[client.id] = outcome;
          break;
        }
      }
    });

    for (const type of UPSTREAM_TYPES) {
      if (!type.start) {
        for (const client of CLIENTS) for (const feature of FEATURES) record(client, type.id, feature.id, { status: "n/a", reason: type.notApplicable });
        continue;
      }
      const models = CLIENTS.flatMap((client) => FEATURES.map((feature) => cellModel(client, feature.id)));
      const upstream = await type.start(models);
      upstreams.push(upstream);
      const gateway = await startGateway(`${upstream.config(models)}tiers:\n  standard: { models: ["*"] }\nserver:\n  default_tier: standard\n`);
      gateways.push(gateway);
      const key = (await gateway.createAccount({ balance: "100" })).raw;
      for (const client of CLIENTS) {
        for (const { id: feature } of FEATURES) {
          const reason = CLIENT_NOT_APPLICABLE[client.id]?.[feature];
          if (reason) {
            record(client, type.id, feature, { status: "n/a", reason });
            continue;
          }
          const ctx = { gatewayUrl: gateway.url, key, model: cellModel(client, feature), upstream, proxy };
          const wasPass = committed?.results[client.id]?.[type.id]?.[feature]?.status === "pass";
          tasks.push(async () => {
            // A cell that passed before gets a second try before it counts as a regression.
            for (let attempt = 1; ; attempt++) {
              upstream.seen.delete(ctx.model);
              try {
                await withTimeout(client.run(feature, ctx), CELL_TIMEOUT_MS);
                record(client, type.id, feature, { status: "pass" });
                return;
              } catch (error) {
                if (error instanceof NotApplicable) return record(client, type.id, feature, { status: "n/a", reason: error.message });
                if (wasPass && attempt === 1) continue;
                const message = describeError(error);
                failures.push(`${client.id} × ${type.id} × ${feature}: ${message.slice(0, 600)}`);
                record(client, type.id, feature, { status: "fail" });
                return;
              }
            }
          });
        }
      }
    }
    await pool(tasks, POOL);

    // Ordered as declared, whatever order the cells finished in.
    const ordered: Matrix["results"] = {};
    for (const client of CLIENTS) {
      ordered[client.id] = {};
      for (const type of UPSTREAM_TYPES) {
        ordered[client.id]![type.id] = {};
        for (const feature of FEATURES) ordered[client.id]![type.id]![feature.id] = results[client.id]![type.id]![feature.id]!;
      }
    }
    const current: Matrix = {
      generated: new Date().toISOString().slice(0, 10),
      clients: CLIENTS.map((c) => ({ id: c.id, name: c.name, packages: Object.fromEntries(c.packages.map((p) => [p, installedVersion(p)])) })),
      upstream_types: UPSTREAM_TYPES.map((t) => ({ id: t.id, name: t.name })),
      features: FEATURES.map((f) => ({ id: f.id, name: f.name })),
      results: ordered,
      mcp: {
        clients: MCP_CLIENTS.map((c) => ({ id: c.id, name: c.name, packages: Object.fromEntries(c.packages.map((p) => [p, installedVersion(p)])) })),
        server_kinds: MCP_SERVER_KINDS.map((k) => ({ id: k.id, name: k.name })),
        features: MCP_FEATURES.map((f) => ({ id: f.id, name: f.name })),
        results: Object.fromEntries(MCP_CLIENTS.map((c) => [c.id, mcpResults[c.id]!])),
      },
    };
    // The date moves only when the content does, so an unchanged matrix leaves the files alone.
    if (committed && comparable(committed) === comparable(current)) current.generated = committed.generated;
    if (failures.length) console.log(`compatibility matrix: failing cells\n${failures.join("\n")}`);
    expect(proxy.attempts, "a client tried to reach something other than the gateway").toEqual([]);

    const lost = committed ? regressions(committed, current) : [];
    const json = renderJson(current);
    const markdown = renderMarkdown(current);
    if (WRITE) {
      writeFileSync(JSON_PATH, json);
      writeFileSync(MD_PATH, markdown);
      if (lost.length) console.log(`compatibility matrix: regressions accepted by COMPATIBILITY_WRITE=1\n${lost.join("\n")}`);
      return;
    }
    expect(lost, `cells that passed in the committed matrix fail now:\n${failures.join("\n")}`).toEqual([]);
    const stale = !committed || comparable(committed) !== comparable(current) || !existsSync(MD_PATH) || readFileSync(MD_PATH, "utf8") !== markdown;
    expect(
      stale,
      "docs/compatibility.md and docs/compatibility.json differ from this run: regenerate them with " +
        "COMPATIBILITY_WRITE=1 npx vitest run test/agents/compatibility-matrix.test.ts and commit both",
    ).toBe(false);
  }, 1_200_000);
});
