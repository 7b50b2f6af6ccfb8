// Every storage-facing suite runs against both databases. PostgreSQL tests create and drop their
// own database on 127.0.0.1:5432; under CI=true an unreachable PostgreSQL fails instead of skipping.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  kind: "sqlite" | "postgres";
  databaseUrl: string | null;
  sqlitePath: string;
  dataDir: string;
  /** The server secret, also in env as GATEWAY_SECRET. */
  secret: string;
  /** Environment for a gateway process or CLI run against this database. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

let postgresReachable: Promise<boolean> | undefined;

export function isPostgresReachable(): Promise<boolean> {
  postgresReachable ??= (async () => {
    const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.query("select 1");
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  })();
  return postgresReachable;
}

/** The database kinds to run: SQLite always; PostgreSQL when reachable, and always under CI. */
export async function databaseKinds(): Promise<Array<"sqlite" | "postgres">> {
  if (process.env.CI === "true" || process.env.CI === "1") return ["sqlite", "postgres"];
  return (await isPostgresReachable()) ? ["sqlite", "postgres"] : ["sqlite"];
}

export const DATABASE_KINDS: Array<"sqlite" | "postgres"> = await databaseKinds();

export async function createTestDatabase(kind: "sqlite" | "postgres"): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), "gw-test-"));
  const sqlitePath = join(dataDir, "gateway.db");
  const secret = randomBytes(24).toString("base64url");
  if (kind === "sqlite") {
    return {
      kind,
      databaseUrl: null,
      sqlitePath,
      dataDir,
      secret,
      env: { GATEWAY_DATA_DIR: dataDir, GATEWAY_SECRET: secret },
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const name = `gw_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  const databaseUrl = url.toString();
  return {
    kind,
    databaseUrl,
    sqlitePath,
    dataDir,
    secret,
    env: { GATEWAY_DATA_DIR: dataDir, GATEWAY_SECRET: secret, DATABASE_URL: databaseUrl },
    drop: async () => {
      const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
