// The targets of the open-streams step: the paced mock itself (direct), our gateway as `npm start`
// runs it (the built dist/cli/main.js, `serve --workers 1`: one process, npm start's node flags and
// allocator settings) on a fresh SQLite database, and Portkey's gateway. Both gateways get the
// loop probe (servers/loop-probe.mjs) preloaded, so both are measured alike and neither is changed.
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { SERVER_ENV, SERVER_NODE_FLAGS } from "../../../src/cli/heap.js";
import { openStore, type Store } from "../../../src/store/index.js";
import { sleep, stopChild, waitForMessage, type Child } from "../procs.js";
import { forkChild, isType, PORTKEY_PRELOAD } from "../servers.js";
import { STREAMS_MODEL } from "./constants.js";

const here = fileURLToPath(new URL(".", import.meta.url));
const GATEWAY_MAIN = resolve(here, "../../../dist/cli/main.js");
const PORTKEY_ENTRY = resolve(here, "../../../node_modules/@portkey-ai/gateway/build/start-server.js");
export const LOOP_PROBE = resolve(here, "../../servers/loop-probe.mjs");
const BALANCE_NANO = 900_000n * 1_000_000_000n;

export type StreamsTargetName = "direct" | "ours" | "peer";

export interface StreamsTarget {
  name: StreamsTargetName;
  url: string;
  headers: Record<string, string>;
  /** The gateway process (null for direct: the mock is measured on its own). */
  child: Child | null;
  /** Ours only: the store and account, for the ledger check after the run. */
  books: { store: Store; accountId: string } | null;
  stop(): Promise<void>;
}

export const peerInstalled = (): boolean => existsSync(PORTKEY_ENTRY);

function configYaml(mockUrl: string, streams: number): string {
  // Neither pool is the limit: the provider's HTTP/1.1 connections (one a stream against the plain
  // HTTP mock, ADR 0043) and the server's client connections both sized above the step's streams.
  return `providers:
  pacedai: { type: openai, base_url: "${mockUrl}/v1", keys: ["sk-paced-upstream-000000000001"], apis: [chat], max_connections: ${streams + 64} }
models:
  - { id: ${STREAMS_MODEL}, kind: chat, provider: pacedai, upstream_model: upstream-paced, context_window: 128000, max_output_tokens: 4096, default_output_tokens: 256, pricing: { input_per_mtok: "1.00", cached_input_per_mtok: "0.50", output_per_mtok: "2.00" } }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
  max_connections: ${streams + 256}
`;
}

async function waitHealthy(child: Child, baseUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.proc.exitCode !== null) throw new Error(`${child.name} exited with ${child.proc.exitCode}:\n${child.tail()}`);
    try {
      const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${child.name} not healthy within 60 s:\n${child.tail()}`);
    await sleep(200);
  }
}

async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => done(typeof address === "object" && address ? address.port : 0));
    });
  });
}

export function directTarget(mockUrl: string): StreamsTarget {
  return {
    name: "direct",
    url: `${mockUrl}/v1/chat/completions`,
    headers: { "content-type": "application/json", authorization: "Bearer sk-direct" },
    child: null,
    books: null,
    stop: async () => undefined,
  };
}

export async function startOurs(mockUrl: string, streams: number): Promise<StreamsTarget> {
  if (!existsSync(GATEWAY_MAIN)) throw new Error(`${GATEWAY_MAIN} is missing: run npm run build first`);
  const dir = mkdtempSync(join(tmpdir(), "gw-streams-"));
  const secret = randomBytes(24).toString("base64url");
  writeFileSync(join(dir, "gateway.config.yaml"), configYaml(mockUrl, streams));
  const store = await openStore({ databaseUrl: null, sqlitePath: join(dir, "data", "gateway.db"), secret });
  let child: Child | null = null;
  try {
    const account = await store.accounts.create({ email: "streams@example.com", tier: "standard", balance: BALANCE_NANO });
    const { raw: apiKey } = await store.keys.create({ accountId: account.id });
    const port = await freePort();
    child = forkChild("ours", GATEWAY_MAIN, {
      execArgv: [...SERVER_NODE_FLAGS, "--import", LOOP_PROBE],
      args: ["serve", "--workers", "1"],
      env: {
        ...SERVER_ENV,
        GATEWAY_CONFIG: join(dir, "gateway.config.yaml"),
        GATEWAY_DATA_DIR: join(dir, "data"),
        GATEWAY_SECRET: secret,
        PORT: String(port),
        HOST: "127.0.0.1",
        // One line a request at info would be 10,000 lines a minute on the shared stdout pipe.
        LOG_LEVEL: "warn",
        DATABASE_URL: "",
      },
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitHealthy(child, baseUrl);
    const started = child;
    return {
      name: "ours",
      url: `${baseUrl}/v1/chat/completions`,
      headers: { "content-type": "application/json", authorization: `Bearer ${apiKey}` },
      child,
      books: { store, accountId: account.id },
      stop: async () => {
        await stopChild(started, 20_000);
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    if (child) await stopChild(child, 5_000);
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

export async function startPeer(mockUrl: string): Promise<StreamsTarget> {
  const child = forkChild("peer", PORTKEY_ENTRY, {
    execArgv: ["--import", PORTKEY_PRELOAD, "--import", LOOP_PROBE],
    args: ["--port=0", "--headless"],
    env: { NODE_ENV: "production" },
  });
  const { port } = await waitForMessage(child, isType<{ type: "ready"; port: number }>("ready"), 60_000);
  return {
    name: "peer",
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    headers: {
      "content-type": "application/json",
      authorization: "Bearer sk-peer-0000000000000000",
      "x-portkey-provider": "openai",
      "x-portkey-custom-host": `${mockUrl}/v1`,
    },
    child,
    books: null,
    stop: () => stopChild(child, 10_000),
  };
}
