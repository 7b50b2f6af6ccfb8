// The bench's processes and databases: the scripts it runs, compiling our gateway, forking a child
// with an IPC channel (killed when the bench ends), starting our gateway as `npm start` would, and
// the PostgreSQL databases each gateway gets. Shared by the orchestrator (bench.ts) and the focused
// tools (profile.ts, latency.ts, billing-pair.ts, gw-batch-ab.ts, ledger-growth).
import { randomBytes } from "node:crypto";
import { execFileSync, fork } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join, resolve } from "node:path";
import pg from "pg";
import { SERVER_ENV, SERVER_NODE_FLAGS } from "../../src/cli/heap.js";
import { adoptChild as registerForked, waitForMessage, type Child } from "./procs.js";

const here = dirname(fileURLToPath(import.meta.url));
const benchDir = resolve(here, "..");
const repoDir = resolve(benchDir, "..");

export const MOCK_SCRIPT = join(benchDir, "servers", "mock-upstream.ts");
export const FLOOR_SCRIPT = join(benchDir, "servers", "minimal-proxy.ts");
export const GATEWAY_CLUSTER_SCRIPT = join(benchDir, ".build", "bench", "servers", "gateway-cluster.js");
// Our gateway runs compiled, as `gateway serve` does in production (dist/): under the tsx loader
// its RSS would be ~55 MiB higher (the loader's worker thread and caches).
export const GATEWAY_SCRIPT = join(benchDir, ".build", "bench", "servers", "gateway.js");

/**
 * Compiles src/ and the gateway harness into bench/.build (incremental: fast when unchanged).
 * tsc emits even when some file has a type error (e.g. work in progress elsewhere in src/): that is
 * returned as a warning; only a missing output is fatal.
 */
export function buildGateway(): string | null {
  const tsc = join(repoDir, "node_modules", "typescript", "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", join(benchDir, "tsconfig.build.json")], { cwd: repoDir, stdio: "pipe", timeout: 180_000 });
    return null;
  } catch (error) {
    const out = (error as { stdout?: Buffer }).stdout?.toString() ?? String(error);
    if (!existsSync(GATEWAY_SCRIPT)) throw new Error(`compiling the gateway for the bench failed:\n${out.slice(0, 2000)}`);
    return `tsc reported errors while compiling the gateway (output emitted anyway): ${out.split("\n")[0]}`;
  }
}
export const LOADGEN_SCRIPT = join(benchDir, "load", "open-loop.ts");
export const PORTKEY_PRELOAD = join(benchDir, "servers", "portkey-preload.mjs");

export function forkChild(name: string, script: string, options: { execArgv?: string[]; args?: string[]; env?: NodeJS.ProcessEnv; stdout?: "ignore" | "pipe" | "inherit" }): Child {
  // fork() gives the IPC channel; adoptChild makes sure the process is killed when the bench ends.
  return registerForked(
    name,
    fork(script, options.args ?? [], {
      cwd: repoDir,
      execArgv: options.execArgv ?? ["--import", "tsx"],
      env: { ...process.env, ...options.env },
      stdio: ["ignore", options.stdout ?? "ignore", "pipe", "ipc"],
    }),
  );
}

/** One of our gateways (servers/gateway.ts) once it listens: its process, URL and request headers. */
export interface OurGateway {
  child: Child;
  url: string;
  headers: Record<string, string>;
}

/**
 * Starts our gateway with the node flags and environment of `npm start` (SERVER_NODE_FLAGS,
 * SERVER_ENV), so that every bench tool measures what production runs; waits until it listens.
 */
export async function startOurGateway(
  name: string,
  options: {
    mockUrl: string;
    billing: "on" | "off";
    /** on: the bench key and account get rate and concurrency limits too high to refuse (servers/gateway.ts). */
    limits?: "on" | "off";
    databaseUrl?: string | null;
    nodeFlags?: string[];
    env?: NodeJS.ProcessEnv;
    stdout?: "ignore" | "inherit";
    /** GATEWAY_CLUSTER_SCRIPT: `serve --workers N` (BENCH_WORKERS in env); default one process. */
    script?: string;
  },
): Promise<OurGateway> {
  const child = forkChild(name, options.script ?? GATEWAY_SCRIPT, {
    execArgv: [...SERVER_NODE_FLAGS, ...(options.nodeFlags ?? [])],
    env: {
      ...SERVER_ENV,
      BENCH_MOCK_URL: options.mockUrl,
      BENCH_BILLING: options.billing,
      BENCH_LIMITS: options.limits ?? "off",
      DATABASE_URL: options.databaseUrl ?? "",
      ...options.env,
    },
    ...(options.stdout ? { stdout: options.stdout } : {}),
  });
  const ready = await waitForMessage(child, isType<{ type: "ready"; port: number; apiKey: string }>("ready"), 60_000);
  return { child, url: `http://127.0.0.1:${ready.port}/v1/chat/completions`, headers: { "content-type": "application/json", authorization: `Bearer ${ready.apiKey}` } };
}

export function isType<T extends { type: string }>(type: string) {
  return (message: unknown): message is T => typeof message === "object" && message !== null && (message as { type?: unknown }).type === type;
}

export async function ask<T extends { type: string }>(child: Child, type: string, timeoutMs = 10_000): Promise<T> {
  const answer = waitForMessage(child, isType<T>(type), timeoutMs);
  child.proc.send({ type });
  return answer;
}

export async function postgresReachable(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A fresh database for one gateway process, named `<prefix>_<random>`; returns its URL and name. */
export async function createBenchDatabase(adminUrl: string, prefix: string): Promise<{ url: string; name: string }> {
  const name = `${prefix}_${randomBytes(5).toString("hex")}`;
  await adminQuery(adminUrl, `create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), name };
}

export function dropBenchDatabase(adminUrl: string, name: string): Promise<void> {
  return adminQuery(adminUrl, `drop database if exists ${name} with (force)`).catch(() => undefined);
}
