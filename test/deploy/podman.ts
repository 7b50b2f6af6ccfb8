// The deploy tests' access to podman: every command through scripts/container/podman-env.sh (runc,
// cgroupfs, the project's own storage where the base image is kept), each with a time limit.
import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** What globalSetup (images.ts) builds from Containerfile. */
export const GATEWAY_IMAGE = "localhost/model-gateway:deploy-test";
/** PostgreSQL built from test/deploy/postgres-image on the same base, for Compose. */
export const POSTGRES_IMAGE = "localhost/model-gateway-test-postgres:15";

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command with podman's environment set; never rejects: the caller asserts the code. */
export function withPodmanEnv(command: string, args: string[], timeoutMs: number, env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-c", `. scripts/container/podman-env.sh && exec "$@"`, "podman-env", command, ...args],
      { cwd: ROOT, timeout: timeoutMs, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024, env: { ...process.env, ...env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === "number" ? error.code : -1) : 0;
        resolve({ code, stdout, stderr: error && code === -1 ? `${stderr}\n${error.message}` : stderr });
      },
    );
  });
}

export function podman(args: string[], timeoutMs = 60_000): Promise<Run> {
  return withPodmanEnv("podman", args, timeoutMs);
}

/** Fails with the command's output when it did not exit 0. */
export async function ok(run: Promise<Run>, what: string): Promise<string> {
  const result = await run;
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}:\n${result.stderr.slice(-4000)}\n${result.stdout.slice(-2000)}`);
  return result.stdout;
}

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

/** Polls GET url until it answers `status`, failing after timeoutMs with describe()'s text. */
export async function waitForStatus(url: string, status: number, timeoutMs: number, describe: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === status) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms:\n${await describe()}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** The first start's API key, from the banner the gateway prints once on stderr. */
export function firstStartKey(log: string): string {
  const key = /API key:\s+(mgw_[A-Za-z0-9_-]+)/.exec(log)?.[1];
  if (!key) throw new Error(`no first-start API key in the log:\n${log.slice(-3000)}`);
  return key;
}

/** A chat completion on a demo model: status, and the cost the answer reports. */
export async function demoChat(baseUrl: string, key: string, model: string): Promise<{ status: number; body: { usage?: { cost?: unknown }; choices?: unknown[] } }> {
  const response = await fetch(`${baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model, messages: [{ role: "user", content: "Hello, gateway!" }] }),
    signal: AbortSignal.timeout(15_000),
  });
  return { status: response.status, body: (await response.json()) as { usage?: { cost?: unknown }; choices?: unknown[] } };
}

export async function logsOf(container: string): Promise<string> {
  const run = await podman(["logs", container]);
  return run.stdout + run.stderr;
}

/** The container's log once it holds `text` (the supervisor prints the first start's banner after its workers listen). */
export async function logUntil(container: string, text: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const log = await logsOf(container);
    if (log.includes(text) || Date.now() > deadline) return log;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
