// Starts the real `gateway serve` as a child process, the built executable a user runs
// (dist/cli/main.js, rebuilt when stale before the tests start: test/support/build-cli.ts), and
// waits on it, with every wait bounded. Children are tracked so a test can always kill what it started.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

/** The package's bin, `gateway` (absolute: the child's cwd is an empty temp dir). */
export const GATEWAY_BIN = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));

/** Variables of the test runner's own environment that must not leak into a "fresh" gateway. */
const GATEWAY_VARIABLES = ["GATEWAY_CONFIG", "GATEWAY_DATA_DIR", "GATEWAY_SECRET", "DATABASE_URL", "PORT", "HOST", "LOG_LEVEL"];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface GatewayProcess {
  child: ChildProcess;
  baseUrl: string;
  stderr(): string;
  stdout(): string;
  /** Resolves with the exit code once the process has exited (or rejects after the timeout). */
  exited(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/**
 * `npm start`'s command (package.json scripts.start: allocator variables, node flags, the built
 * dist/cli/main.js) with the entry made absolute, so that it runs from another directory.
 */
export function builtStartCommand(): { env: Record<string, string>; args: string[] } {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/).filter(Boolean);
  const env: Record<string, string> = {};
  while (words[0] !== undefined && /^[A-Z_]+=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split("=");
    env[name!] = value.join("=");
  }
  if (words.shift() !== "node") throw new Error(`scripts.start does not run node: ${pkg.scripts.start}`);
  return { env, args: words.map((word) => (word.startsWith("dist/") ? join(ROOT, word) : word)) };
}

/**
 * Runs `npm start`'s prestart step: rebuilds dist/ (and the dashboard) when a source is newer.
 * Asynchronous: a build blocking the test worker for a minute times out vitest's own messages.
 */
export async function buildIfStale(): Promise<void> {
  await promisify(execFile)(process.execPath, [join(ROOT, "scripts", "build-if-stale.mjs")], { cwd: ROOT, timeout: 300_000 });
}

/**
 * `gateway serve` (default), or exactly as `npm start` runs it (built: its node flags and environment;
 * call buildIfStale first, which also builds the dashboard). workers: `--workers N`; the plain command
 * defaults to 1 (one process, as before --workers existed), npm start's to its own default. bin:
 * another build's dist/cli/main.js (the previous release, test/deploy/previous-release.ts).
 */
export async function startGateway(
  cwd: string,
  env: Record<string, string>,
  options: { port?: number; built?: boolean; workers?: number; bin?: string } = {},
): Promise<GatewayProcess> {
  const port = options.port ?? (await freePort());
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const name of GATEWAY_VARIABLES) delete childEnv[name];
  const built = options.built ? builtStartCommand() : null;
  Object.assign(childEnv, built?.env, env, { PORT: String(port), HOST: "127.0.0.1" });
  const workers = options.workers ?? (built ? undefined : 1);
  const args = [...(built ? built.args : [options.bin ?? GATEWAY_BIN, "serve"]), ...(workers === undefined ? [] : ["--workers", String(workers)])];
  const child = spawn(process.execPath, args, { cwd, env: childEnv, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (err += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    });
  });
  return {
    child,
    baseUrl: `http://127.0.0.1:${port}`,
    stderr: () => err,
    stdout: () => out,
    exited: (timeoutMs) => withTimeout(exit, timeoutMs, () => `gateway did not exit within ${timeoutMs} ms; stderr:\n${err}`),
  };
}

/** Polls until the predicate holds, failing after timeoutMs with a message from describe(). */
export async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs: number, describe: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms: ${describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Waits until GET /healthz answers 200 (or the process exits). The deadline is for a loaded CI
 * machine, not a quiet one: a start that is merely slow must not fail a test (a gateway that cannot
 * start exits, and that fails it at once). Start-up time itself is measured in bench/startup.ts.
 */
export const READY_DEADLINE_MS = 45_000;

/**
 * The timeout of a test (or hook) that starts a gateway and waits for it: the readiness deadline
 * and a minute for the rest, so that vitest's own timeout never ends the wait before its deadline.
 */
export const PROCESS_TEST_TIMEOUT_MS = READY_DEADLINE_MS + 60_000;

export async function waitUntilHealthy(gateway: GatewayProcess, timeoutMs = READY_DEADLINE_MS): Promise<void> {
  await waitFor(
    async () => {
      if (gateway.child.exitCode !== null) throw new Error(`gateway exited with ${gateway.child.exitCode}:\n${gateway.stderr()}`);
      try {
        const response = await fetch(`${gateway.baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) });
        await response.arrayBuffer();
        return response.status === 200;
      } catch {
        return false;
      }
    },
    timeoutMs,
    () => `GET /healthz never answered 200; stderr:\n${gateway.stderr()}`,
  );
}

export function killAll(): void {
  for (const child of running) child.kill("SIGKILL");
  running.clear();
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message())), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
