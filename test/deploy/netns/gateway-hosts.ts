// Gateway hosts: `gateway serve --workers 1` (the built dist/cli/main.js) in each host's namespace,
// under a supervisor that restarts it whenever it exits, as an orchestrator (systemd
// Restart=always, a Kubernetes Deployment) would. Each host keeps the tail of its output for the
// failure messages.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Host } from "./network.js";

const GATEWAY_BIN = fileURLToPath(new URL("../../../dist/cli/main.js", import.meta.url));
export const GATEWAY_PORT = 8080;
const RESTART_DELAY_MS = 300;
const LOG_TAIL = 30_000;

export interface GatewayHost {
  host: Host;
  baseUrl: string;
  /** How many times the supervisor started it (1 before any restart). */
  starts: number;
  pid(): number | undefined;
  /** SIGKILL, as when the machine or the container dies. */
  kill9(): void;
  log(): string;
}

export interface Supervisor {
  hosts: GatewayHost[];
  /** Stops supervising and kills every gateway; resolves when they have exited (bounded). */
  stop(): Promise<void>;
}

export function superviseGateways(hosts: readonly Host[], env: Record<string, string>): Supervisor {
  let stopping = false;
  const children = new Set<ChildProcess>();
  const gateways = hosts.map((host) => {
    const dataDir = mkdtempSync(join(tmpdir(), `mgw-netns-${host.name}-`));
    let child: ChildProcess | undefined;
    let log = "";
    const append = (chunk: string) => {
      log = (log + chunk).slice(-LOG_TAIL);
    };
    const gateway: GatewayHost = {
      host,
      baseUrl: `http://${host.address}:${GATEWAY_PORT}`,
      starts: 0,
      pid: () => child?.pid,
      kill9: () => {
        if (child?.pid) process.kill(child.pid, "SIGKILL");
      },
      log: () => log,
    };
    const start = () => {
      gateway.starts += 1;
      append(`\n[supervisor] start ${gateway.starts}\n`);
      const started = spawn("ip", ["netns", "exec", host.namespace, process.execPath, GATEWAY_BIN, "serve", "--workers", "1"], {
        env: { ...process.env, ...env, HOST: host.address, PORT: String(GATEWAY_PORT), GATEWAY_DATA_DIR: dataDir },
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = started;
      children.add(started);
      started.stdout?.setEncoding("utf8").on("data", append);
      started.stderr?.setEncoding("utf8").on("data", append);
      started.once("exit", (code, signal) => {
        children.delete(started);
        append(`\n[supervisor] exited with ${signal ?? code}\n`);
        if (!stopping) setTimeout(() => !stopping && start(), RESTART_DELAY_MS);
      });
    };
    start();
    return gateway;
  });
  return {
    hosts: gateways,
    stop: async () => {
      stopping = true;
      const exits = [...children].map(
        (child) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve()))),
      );
      for (const child of children) child.kill("SIGKILL");
      await Promise.race([Promise.all(exits), new Promise((resolve) => setTimeout(resolve, 10_000))]);
    },
  };
}
