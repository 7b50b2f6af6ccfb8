// HAProxy in the root namespace in front of the gateway hosts: round robin, a health check on
// /readyz every 500 ms (down after 2 failures, up after 2 passes, each check at most 1 s), and a
// request whose connection is refused is sent to another host (retries + redispatch: nothing of it
// reached a gateway, so it is safe for a POST). The stats page tells the test what HAProxy thinks.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GatewayHost } from "./gateway-hosts.js";

export interface Haproxy {
  url: string;
  /** Each server's state as HAProxy's stats report it: "UP", "DOWN", "UP 1/2", … */
  states(): Promise<Record<string, string>>;
  log(): string;
  stop(): Promise<void>;
}

export function haproxyConfig(hosts: readonly GatewayHost[], listen: string, statsListen: string): string {
  return [
    "global",
    "  maxconn 4000",
    "defaults",
    "  mode http",
    "  timeout connect 1s",
    "  timeout client 60s",
    "  timeout server 60s",
    "  timeout check 1s",
    "  retries 3",
    "  option redispatch 1",
    "frontend api",
    `  bind ${listen}`,
    "  default_backend gateways",
    "frontend stats",
    `  bind ${statsListen}`,
    "  stats enable",
    "  stats uri /stats",
    "backend gateways",
    "  balance roundrobin",
    "  option httpchk GET /readyz",
    "  http-check expect status 200",
    "  default-server inter 500 fall 2 rise 2",
    // Every host unchecked as a backup: when the database is down for all of them, every check fails
    // and HAProxy would answer its own 503; the backups let the gateways answer their catalogue's.
    "  option allbackups",
    ...hosts.map((gateway) => `  server ${gateway.host.name} ${new URL(gateway.baseUrl).host} check`),
    ...hosts.map((gateway) => `  server ${gateway.host.name}-backup ${new URL(gateway.baseUrl).host} backup`),
    "",
  ].join("\n");
}

export async function startHaproxy(hosts: readonly GatewayHost[], address: string, port: number, statsPort: number): Promise<Haproxy> {
  const dir = mkdtempSync(join(tmpdir(), "mgw-netns-haproxy-"));
  const configPath = join(dir, "haproxy.cfg");
  writeFileSync(configPath, haproxyConfig(hosts, `${address}:${port}`, `${address}:${statsPort}`));
  let log = "";
  const child: ChildProcess = spawn("haproxy", ["-db", "-f", configPath], { stdio: ["ignore", "pipe", "pipe"] });
  const append = (chunk: string) => (log = (log + chunk).slice(-20_000));
  child.stdout?.setEncoding("utf8").on("data", append);
  child.stderr?.setEncoding("utf8").on("data", append);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const statsUrl = `http://${address}:${statsPort}/stats;csv`;
  return {
    url: `http://${address}:${port}`,
    states: async () => {
      const response = await fetch(statsUrl, { signal: AbortSignal.timeout(2000) });
      const lines = (await response.text()).split("\n");
      const header = (lines[0] ?? "").replace(/^# /, "").split(",");
      const [name, server, status] = ["pxname", "svname", "status"].map((column) => header.indexOf(column));
      const states: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const fields = line.split(",");
        if (fields[name!] === "gateways" && fields[server!] !== "BACKEND" && !fields[server!]!.endsWith("-backup")) states[fields[server!]!] = fields[status!]!;
      }
      return states;
    },
    log: () => log,
    stop: async () => {
      child.kill("SIGKILL");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
