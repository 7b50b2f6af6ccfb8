// Child processes of the bench: every one is registered here and killed when the bench ends,
// whether it ends normally, on an error, or on SIGINT/SIGTERM. Nothing outlives the run.
import { spawn, type ChildProcess, type SpawnOptions } from "node:child_process";

const children = new Set<ChildProcess>();
let hooked = false;

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  // Last resort: synchronous kill of whatever is still alive.
  process.on("exit", () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
}

/** For the CLI entry points (not a test runner's worker): SIGINT/SIGTERM stop the children, then exit. */
export function stopChildrenOnSignals(): void {
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`\nbench: ${signal}, stopping child processes\n`);
    void killAll().finally(() => process.exit(130));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
}

export interface Child {
  proc: ChildProcess;
  name: string;
  /** Last lines of stderr/stdout, for error messages. */
  tail(): string;
  /** Resolves with the exit code (or signal) once the process is gone. */
  exited: Promise<number | string>;
}

export function startChild(name: string, command: string, args: string[], options: SpawnOptions & { keepOutput?: boolean } = {}): Child {
  const proc = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], ...options });
  return adoptChild(name, proc, options.keepOutput !== false);
}

/** Registers a process started elsewhere (e.g. fork()) so that it is killed with the others. */
export function adoptChild(name: string, proc: ChildProcess, keepStdout = true): Child {
  hookExit();
  children.add(proc);
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (!line) continue;
      lines.push(line.slice(0, 500));
      if (lines.length > 40) lines.shift();
    }
  };
  // Drain the pipes so a chatty child never blocks on a full pipe.
  proc.stdout?.on("data", keepStdout ? keep : () => undefined);
  proc.stderr?.on("data", keep);
  const exited = new Promise<number | string>((resolve) => {
    proc.once("exit", (code, signal) => {
      children.delete(proc);
      resolve(code ?? signal ?? "unknown");
    });
    proc.once("error", (error) => {
      children.delete(proc);
      lines.push(`spawn error: ${error.message}`);
      resolve("spawn-error");
    });
  });
  return { proc, name, tail: () => lines.join("\n"), exited };
}

/** SIGTERM, then SIGKILL after graceMs. Resolves when the process is gone. */
export async function stopChild(child: Child, graceMs = 5_000): Promise<void> {
  const { proc } = child;
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  proc.kill("SIGTERM");
  const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
  await child.exited;
  clearTimeout(timer);
}

export async function killAll(): Promise<void> {
  await Promise.all(
    [...children].map(async (proc) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), 3_000);
      await new Promise((resolve) => proc.once("exit", resolve));
      clearTimeout(timer);
    }),
  );
}

/** Waits for the first IPC message matching `accept`, or fails after timeoutMs or on exit. */
export function waitForMessage<T>(child: Child, accept: (message: unknown) => message is T, timeoutMs: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`${child.name}: no answer within ${timeoutMs} ms\n${child.tail()}`)), timeoutMs);
    const onMessage = (message: unknown) => {
      if (accept(message)) finish(null, message);
    };
    const onExit = () => finish(new Error(`${child.name} exited early\n${child.tail()}`));
    function finish(error: Error | null, value?: T) {
      clearTimeout(timer);
      child.proc.off("message", onMessage);
      child.proc.off("exit", onExit);
      if (error) reject(error);
      else resolve(value as T);
    }
    child.proc.on("message", onMessage);
    child.proc.once("exit", onExit);
  });
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
