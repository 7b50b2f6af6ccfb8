// PostgreSQL as its own host: a fresh cluster (initdb into a temp dir, run as user postgres) listening
// on port 5432 of its namespace's address only, never the machine's shared server. Trust auth from
// the subnet: the test network is private to this process.
import { chmodSync, chownSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { must, run, type Host } from "./network.js";

export interface PostgresHost {
  url(database: string): string;
  restart(): Promise<void>;
  stop(): Promise<void>;
  log(): Promise<string>;
}

function binDir(): string {
  const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error("no PostgreSQL under /usr/lib/postgresql");
  return `/usr/lib/postgresql/${versions[0]}/bin`;
}

export async function startPostgresHost(host: Host, subnet: string): Promise<PostgresHost> {
  const bin = binDir();
  const root = mkdtempSync(join(tmpdir(), "mgw-netns-pg-"));
  chmodSync(root, 0o755);
  const data = join(root, "data");
  const logFile = join(root, "postgres.log");
  writeFileSync(logFile, "");
  const { uid, gid } = await postgresIds();
  chownSync(root, uid, gid);
  chownSync(logFile, uid, gid);
  const asPostgres = (args: string[], timeoutMs = 60_000) => must("ip", ["netns", "exec", host.namespace, "runuser", "-u", "postgres", "--", ...args], timeoutMs);
  await asPostgres([`${bin}/initdb`, "-D", data, "-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8"], 120_000);
  writeFileSync(
    join(data, "postgresql.auto.conf"),
    [`listen_addresses = '${host.address}'`, "port = 5432", `unix_socket_directories = '${root}'`, "fsync = off", "max_connections = 200", ""].join("\n"),
  );
  writeFileSync(join(data, "pg_hba.conf"), `host all all ${subnet}.0/24 trust\nlocal all all trust\n`);
  chownSync(join(data, "postgresql.auto.conf"), uid, gid);
  chownSync(join(data, "pg_hba.conf"), uid, gid);
  const ctl = (action: string) => asPostgres([`${bin}/pg_ctl`, "-D", data, "-l", logFile, "-w", "-t", "60", action], 90_000);
  await ctl("start");
  await asPostgres([`${bin}/psql`, "-h", root, "-U", "postgres", "-c", "CREATE DATABASE gateway"]);
  return {
    url: (database) => `postgres://postgres@${host.address}:5432/${database}`,
    restart: async () => {
      // -m fast: connected sessions are ended at once, as when the database host reboots or fails over.
      await asPostgres([`${bin}/pg_ctl`, "-D", data, "-l", logFile, "-w", "-t", "60", "-m", "fast", "restart"], 90_000);
    },
    stop: async () => {
      await run("ip", ["netns", "exec", host.namespace, "runuser", "-u", "postgres", "--", `${bin}/pg_ctl`, "-D", data, "-w", "-t", "20", "-m", "immediate", "stop"], 30_000);
      rmSync(root, { recursive: true, force: true });
    },
    log: async () => (await run("tail", ["-n", "40", logFile])).stdout,
  };
}

async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([must("id", ["-u", "postgres"]), must("id", ["-g", "postgres"])]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}
