// Runs a coding agent's CLI headless as a child process, bounded in time, with a sandboxed HOME and
// every proxy variable pointed at a loopback trap: any request an agent tries to make anywhere but
// the gateway is recorded (and refused) instead of leaving the machine.
import { spawn } from "node:child_process";
import type { IncomingHttpHeaders, IncomingMessage, Server as HttpServer, ServerResponse } from "node:http";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";
import { afterAll, beforeAll, beforeEach } from "vitest";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const require = createRequire(import.meta.url);

export interface AgentRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Spawns `command` in its own process group and kills the whole group once `timeoutMs` passes. */
export function runAgent(
  command: string,
  args: string[],
  options: { env: Record<string, string>; cwd: string; timeoutMs: number; input?: string; signal?: AbortSignal },
): Promise<AgentRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true, stdio: [options.input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    if (options.input !== undefined) child.stdin?.end(options.input);
    let stdout = "";
    let stderr = "";
    let timedOut = false;
    child.stdout!.on("data", (c: Buffer) => (stdout += c.toString("utf8")));
    child.stderr!.on("data", (c: Buffer) => (stderr += c.toString("utf8")));
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        // the group is already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup("SIGTERM");
      setTimeout(() => killGroup("SIGKILL"), 2_000).unref();
    }, options.timeoutMs);
    // An abort (the matrix's abort cells) ends the group the way a user's Ctrl-C would.
    options.signal?.addEventListener("abort", () => killGroup("SIGINT"), { once: true });
    child.on("error", (error) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, timedOut, stdout, stderr: `${stderr}\nspawn error: ${error.message}`, ms: Date.now() - started });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // Helpers an agent left behind (a shell tool's children) go with the group.
      killGroup("SIGKILL");
      resolve({ code, signal, timedOut, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** Everything needed to understand a failed run, for assertion messages. */
export function describeRun(run: AgentRun, extra: string = ""): string {
  const cut = (s: string) => (s.length > 6_000 ? `${s.slice(0, 3_000)}\n…\n${s.slice(-3_000)}` : s);
  return `exit=${run.code} signal=${run.signal} timedOut=${run.timedOut} ms=${run.ms}\n--- stdout ---\n${cut(run.stdout)}\n--- stderr ---\n${cut(run.stderr)}${extra ? `\n--- context ---\n${extra}` : ""}`;
}

export interface ProxyTrap {
  url: string;
  /** The first line (request line or CONNECT target) of every request an agent tried to proxy. */
  attempts: string[];
  close(): Promise<void>;
}

/**
 * A loopback "proxy" that answers every request with 403 and records it. HTTP(S)_PROXY point here
 * with NO_PROXY covering loopback, so the gateway is reached directly and nothing else leaves.
 */
export async function startProxyTrap(): Promise<ProxyTrap> {
  const attempts: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    socket.once("data", (chunk: Buffer) => {
      attempts.push(chunk.toString("latin1").split("\r\n")[0] ?? "");
      socket.end("HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    attempts,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The environment every agent run starts from: no inherited credentials, a private HOME, proxies trapped. */
export function isolatedEnv(home: string, proxy: ProxyTrap): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    USER: "agent-test",
    LANG: "C.UTF-8",
    TERM: "dumb",
    NO_COLOR: "1",
    TMPDIR: tmpdir(),
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    XDG_STATE_HOME: join(home, ".local", "state"),
    HTTP_PROXY: proxy.url,
    HTTPS_PROXY: proxy.url,
    ALL_PROXY: proxy.url,
    http_proxy: proxy.url,
    https_proxy: proxy.url,
    all_proxy: proxy.url,
    NO_PROXY: "127.0.0.1,localhost,::1",
    no_proxy: "127.0.0.1,localhost,::1",
  };
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

function packageDir(name: string): string | null {
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    return null;
  }
}

const isNativeBinary = (path: string) => existsSync(path) && statSync(path).size > 1_000_000;

/**
 * Claude Code's native binary. The wrapper's postinstall copies it over bin/claude.exe; if that
 * script was skipped (npm's allowScripts), the platform package still holds it.
 */
export function claudeBinary(): string | null {
  const wrapper = packageDir("@anthropic-ai/claude-code");
  if (wrapper && isNativeBinary(join(wrapper, "bin", "claude.exe"))) return join(wrapper, "bin", "claude.exe");
  const platform = `${process.platform}-${process.arch}`;
  for (const suffix of [platform, `${platform}-musl`]) {
    const dir = packageDir(`@anthropic-ai/claude-code-${suffix}`);
    if (dir && isNativeBinary(join(dir, "claude"))) return join(dir, "claude");
  }
  return null;
}

/** Codex's launcher script (it picks the platform binary from the optional package). */
export function codexLauncher(): string | null {
  const dir = packageDir("@openai/codex");
  return dir && existsSync(join(dir, "bin", "codex.js")) ? join(dir, "bin", "codex.js") : null;
}

export interface SeenRequest {
  method: string;
  /** The path with its query string, as the agent sent it. */
  url: string;
  headers: IncomingHttpHeaders;
  /** The gateway's status, once the response finished. */
  status?: number;
  /** The gateway's x-gateway-warnings response header, if it sent one. */
  warnings?: string;
}

/**
 * Records what reached the gateway's socket before any routing: the request log strips the query
 * string, and the agents' exact URLs (`/v1/messages?beta=true`) are part of what is tested.
 */
export function recordGatewayRequests(server: HttpServer): SeenRequest[] {
  const seen: SeenRequest[] = [];
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const entry: SeenRequest = { method: req.method ?? "", url: req.url ?? "", headers: req.headers };
    seen.push(entry);
    // Streams are written with writeHead(status, headers), which getHeader() never sees: read the
    // headers from the call itself (observing only, the arguments pass on unchanged).
    // eslint-disable-next-line @typescript-eslint/unbound-method -- applied below with the response as this
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      const headers = args.find((a, i) => i > 0 && typeof a === "object" && a !== null) as Record<string, unknown> | undefined;
      const warnings = headers?.["x-gateway-warnings"] ?? res.getHeader("x-gateway-warnings");
      if (warnings !== undefined) entry.warnings = String(warnings);
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    };
    res.on("finish", () => (entry.status = res.statusCode));
  });
  return seen;
}

export interface AgentRig {
  mock: MockUpstream;
  gateway: TestGateway;
  proxy: ProxyTrap;
  /** Requests as they reached the gateway (exact URL, headers, status). */
  seen: SeenRequest[];
  /** A gateway API key with a balance. */
  key: string;
}

/**
 * For one describe block: a mock upstream, a gateway in front of it, a proxy trap, a funded key;
 * the records are cleared before each test and everything is closed after the block.
 */
export function useAgentRig(bind: (rig: AgentRig) => void, options: { extraModels?: string; tier?: string } = {}): void {
  let rig: AgentRig | undefined;
  beforeAll(async () => {
    const mock = await startMockUpstream();
    const gateway = await startGateway(mockConfig({ openaiUrl: mock.url, extra: options.extraModels }));
    const seen = recordGatewayRequests(gateway.app.server.server);
    const key = (await gateway.createAccount({ balance: "50", tier: options.tier })).raw;
    rig = { mock, gateway, proxy: await startProxyTrap(), seen, key };
    bind(rig);
  });
  afterAll(async () => {
    await rig?.gateway.close();
    await rig?.mock.close();
    await rig?.proxy.close();
  });
  beforeEach(() => {
    if (!rig) return;
    rig.mock.requests.length = 0;
    rig.seen.length = 0;
    rig.proxy.attempts.length = 0;
  });
}

/** Gemini CLI's entry script (run with this Node: its bin is a Node script). */
export function geminiCliLauncher(): string | null {
  const dir = packageDir("@google/gemini-cli");
  if (!dir) return null;
  const bin = (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { bin?: Record<string, string> }).bin?.gemini;
  return bin && existsSync(join(dir, bin)) ? join(dir, bin) : null;
}

/**
 * Gemini CLI's environment for one headless run against the gateway, in a private HOME whose settings
 * choose API-key auth and turn telemetry, usage statistics and update checks off.
 */
export function geminiCliEnv(gatewayUrl: string, key: string, proxy: ProxyTrap): Record<string, string> {
  const home = tempDir("gemini-home-");
  mkdirSync(join(home, ".gemini"), { recursive: true });
  writeFileSync(
    join(home, ".gemini", "settings.json"),
    JSON.stringify({
      general: { disableAutoUpdate: true, disableUpdateNag: true },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      security: { auth: { selectedType: "gemini-api-key" } },
    }),
  );
  return {
    ...isolatedEnv(home, proxy),
    GEMINI_API_KEY: key,
    GOOGLE_GEMINI_BASE_URL: gatewayUrl,
    GEMINI_TELEMETRY_ENABLED: "false",
    // One process in the test's process group (no relaunch with a larger heap), so signals reach it.
    GEMINI_CLI_NO_RELAUNCH: "true",
    // Headless runs refuse an untrusted folder; the temporary cwd is the test's own.
    GEMINI_CLI_TRUST_WORKSPACE: "true",
  };
}
