// Migrating a PostgreSQL database that serves (ADR 0052): each pending migration runs in its own
// transaction with a lock timeout and is tried again while a table it needs is busy. The request
// here holds `holds` (as an admission does) and then reads `keys`; migration 0030 alters `keys` and
// then `holds`. Migrated in one transaction that waits without a bound, the two deadlock and
// PostgreSQL aborts one of them: the request of the release still serving, or the new release's
// start. Here neither fails, and the request is never kept waiting for the migration's whole run.
import pg from "pg";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import { migrate } from "../../src/store/migrate.js";
import { MIGRATION_NAMES } from "../../src/store/migration-names.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";

const BEFORE_TAGS = "0029-budget-scopes";

describe.runIf(DATABASE_KINDS.includes("postgres"))("migrating a serving PostgreSQL database", () => {
  let database: TestDatabase | undefined;
  let store: Store | undefined;
  let request: pg.Client | undefined;
  afterEach(async () => {
    await request?.end();
    await store?.close();
    await database?.drop();
  });

  it("neither deadlocks with a request that holds one table and reads another, nor fails it", { timeout: 60_000 }, async () => {
    database = await createTestDatabase("postgres");
    store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: "test-secret-0123456789", migrate: false });
    await migrate(store.handle, BEFORE_TAGS);

    request = new pg.Client({ connectionString: database.databaseUrl! });
    await request.connect();
    await request.query("begin");
    await request.query("lock table holds in row exclusive mode");

    const migrating = migrate(store.handle);
    // Let the migration take `keys` and queue for `holds`.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const readStarted = Date.now();
    await request.query("select count(*) from keys");
    const readMs = Date.now() - readStarted;
    // Held past PostgreSQL's deadlock check (1 s): a migration still waiting on `holds` with `keys` held would be caught in it.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await request.query("commit");

    const { applied } = await migrating;
    expect(applied[0]).toBe("0030-request-tags");
    expect(applied.at(-1)).toBe(MIGRATION_NAMES.at(-1));
    const recorded = (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(store.db)).rows.map((row) => row.name);
    expect(recorded).toEqual([...MIGRATION_NAMES]);
    // Waited at most for one lock timeout of the migration (200 ms), not for the whole migration.
    expect(readMs).toBeLessThan(1000);
  });
});
