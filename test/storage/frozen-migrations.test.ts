// The numbered migrations are frozen (src/store/migrate.ts): what each one runs on a database never
// changes once written, whatever the code around it becomes (the dimension list, the builders of
// dimension-sql.ts and ledger-chain-sql.ts, the constants of the runtime). Each migration's statements
// on each database hash to the value recorded in frozen-migrations.json. A new migration records its
// hashes with FROZEN_MIGRATIONS_WRITE=1 (which refuses to change a hash already recorded).
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { Kysely, PostgresDialect, SqliteDialect, type LogEvent } from "kysely";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { DIMENSION_SET } from "../../src/core/dimensions.js";
import { MAX_BALANCE, MAX_TOTAL_SPENT } from "../../src/core/money.js";
import { LEDGER_ROW_EXISTS } from "../../src/store/db-errors.js";
import { openDatabase } from "../../src/store/database.js";
import { HOUR_MS } from "../../src/store/dimension-sql.js";
import { LEDGER_CHAIN_COLUMNS } from "../../src/store/ledger-chain.js";
import { migrate } from "../../src/store/migrate.js";
import * as initial from "../../src/store/migrations/0001-initial.js";
import * as appendOnlyGaps from "../../src/store/migrations/0005-ledger-append-only-gaps.js";
import * as ledgerKeyedChain from "../../src/store/migrations/0023-ledger-keyed-chain.js";
import { POSTGRES_LEDGER_KEY_SETTING } from "../../src/store/ledger-chain-key.js";
import { LEDGER_CHAIN_COLUMNS_AT_0011 } from "../../src/store/migrations/0011-ledger-attempts.js";
import { LEDGER_CHAIN_COLUMNS_AT_0026 } from "../../src/store/migrations/0026-ledger-price-factor.js";
import type { Database } from "../../src/store/tables.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";

const GOLDEN = new URL("./frozen-migrations.json", import.meta.url);
type Golden = Record<string, Partial<Record<"sqlite" | "postgres", string>>>;

/** Every migration's statements (SQL and parameters), by migration name, as they ran on a new database. */
async function statementsByMigration(kind: "sqlite" | "postgres", database: TestDatabase): Promise<Map<string, string[]>> {
  const byMigration = new Map<string, string[]>();
  let current: string[] = [];
  const log = (event: LogEvent) => {
    const { sql, parameters } = event.query;
    // Kysely records each migration it ran right after running it.
    if (/^insert into "kysely_migration" /.test(sql)) {
      byMigration.set(String(parameters[0]), current);
      current = [];
    } else if (!sql.includes("kysely_migration") && !parameters.some((p) => String(p).startsWith("kysely_migration"))) {
      current.push(`${sql}\n${JSON.stringify(parameters, (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value))}`);
    }
  };
  if (kind === "sqlite") {
    // The gateway's connection (its registered ledger hash function), under a Kysely that logs.
    const handle = await openDatabase({ databaseUrl: null, sqlitePath: ":memory:" });
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: handle.sqlite! }), log });
    try {
      await migrate({ ...handle, db });
    } finally {
      await db.destroy();
    }
  } else {
    const pool = new pg.Pool({ connectionString: database.databaseUrl! });
    pool.on("error", () => undefined);
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log });
    try {
      await migrate({ db, dialect: "postgres", dimensions: DIMENSION_SET });
    } finally {
      await db.destroy();
    }
  }
  return byMigration;
}

const digest = (statements: string[]) => createHash("sha256").update(statements.join("\n;\n")).digest("hex");

describe("frozen migrations", () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    for (const database of databases) await database.drop();
  });

  for (const kind of DATABASE_KINDS) {
    it(`run the same statements as when they were written, on ${kind}`, async () => {
      const database = await createTestDatabase(kind);
      databases.push(database);
      const golden = JSON.parse(readFileSync(GOLDEN, "utf8")) as Golden;
      const ran = await statementsByMigration(kind, database);
      expect(ran.size).toBeGreaterThan(19);
      const changed: string[] = [];
      for (const [name, statements] of ran) {
        const recorded = golden[name]?.[kind];
        if (recorded === undefined && process.env.FROZEN_MIGRATIONS_WRITE === "1") (golden[name] ??= {})[kind] = digest(statements);
        else if (recorded !== digest(statements)) changed.push(recorded === undefined ? `${name} (not recorded)` : name);
      }
      if (process.env.FROZEN_MIGRATIONS_WRITE === "1") writeFileSync(GOLDEN, `${JSON.stringify(golden, null, 2)}\n`);
      expect(changed, "these migrations ran other statements than when they were written").toEqual([]);
    });
  }
});

describe("the runtime's copies of values frozen in migrations", () => {
  it("equal the migrations' literals", () => {
    expect(MAX_BALANCE).toBe(initial.MAX_BALANCE);
    expect(MAX_TOTAL_SPENT).toBe(initial.MAX_TOTAL_SPENT);
    expect(LEDGER_ROW_EXISTS).toBe(appendOnlyGaps.LEDGER_ROW_EXISTS);
    expect(HOUR_MS).toBe(3_600_000);
    expect(POSTGRES_LEDGER_KEY_SETTING).toBe(ledgerKeyedChain.LEDGER_KEY_SETTING);
    // The chain the code hashes starts with the columns the migrations' triggers hash, in their order.
    expect(LEDGER_CHAIN_COLUMNS.slice(0, LEDGER_CHAIN_COLUMNS_AT_0011.length)).toEqual(LEDGER_CHAIN_COLUMNS_AT_0011);
    expect(LEDGER_CHAIN_COLUMNS.slice(0, LEDGER_CHAIN_COLUMNS_AT_0026.length)).toEqual(LEDGER_CHAIN_COLUMNS_AT_0026);
  });
});
