// openStore applies the migrations only when the database is behind the code (migration-names.ts):
// a database up to date costs one query and no migration module, and every other state is handed
// to migrate.ts as before: one behind is brought up to date, one recording an unknown migration is
// refused, except a later release's (ADR 0050), left as it is. On PostgreSQL the billing functions
// are created afresh on every open of this code's schema, as migrate does.
import { readdirSync } from "node:fs";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import { migrate } from "../../src/store/migrate.js";
import { MIGRATION_NAMES } from "../../src/store/migration-names.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";

const SECRET = "test-secret-0123456789";

describe("the migration names", () => {
  it("are the migration modules' file names, in order", () => {
    const files = readdirSync(new URL("../../src/store/migrations/", import.meta.url))
      .filter((file) => /^\d{4}-.*\.ts$/.test(file) && !file.endsWith(".test.ts"))
      .map((file) => file.replace(/\.ts$/, ""))
      .sort();
    expect([...MIGRATION_NAMES]).toEqual(files);
  });
});

for (const kind of DATABASE_KINDS) {
  describe(`openStore's migrations on ${kind}`, () => {
    let database: TestDatabase | undefined;
    let store: Store | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
      await database?.drop();
    });

    const open = (migrateOnOpen = true) => openStore({ databaseUrl: database!.databaseUrl, sqlitePath: database!.sqlitePath, secret: SECRET, migrate: migrateOnOpen });
    const recorded = async (s: Store) => (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(s.db)).rows.map((row) => row.name);

    it("brings a new database and one behind the code up to date", async () => {
      database = await createTestDatabase(kind);
      store = await open(false);
      await migrate(store.handle, "0020-ledger-chain-lookups");
      await store.close();
      store = await open();
      expect(await recorded(store)).toEqual([...MIGRATION_NAMES]);
      await store.close();
      store = await open();
      expect(await recorded(store)).toEqual([...MIGRATION_NAMES]);
    });

    it("refuses a database that records a migration the code does not have, sorting before its last", async () => {
      database = await createTestDatabase(kind);
      store = await open();
      await sql`insert into kysely_migration (name, timestamp) values ('0020a-unknown', '2026-11-29T00:00:00.000Z')`.execute(store.db);
      await store.close();
      store = undefined;
      await expect(open()).rejects.toThrow(/0020a-unknown/);
    });

    // A rollback to this release, or one of its replicas restarting during a rolling upgrade (ADR 0050).
    it("serves on a database a later release migrated, leaving its schema and billing functions as they are", async () => {
      database = await createTestDatabase(kind);
      store = await open();
      await sql`insert into kysely_migration (name, timestamp) values ('9999-from-a-later-release', '2026-11-29T00:00:00.000Z')`.execute(store.db);
      // The later release's billing functions stand for themselves here: gone, and not created again.
      if (kind === "postgres") await sql`drop function gw_batch`.execute(store.db);
      await store.close();
      store = await open();
      expect(store.newerMigrations).toEqual(["9999-from-a-later-release"]);
      expect(await recorded(store)).toEqual([...MIGRATION_NAMES, "9999-from-a-later-release"]);
      if (kind === "postgres") {
        const { rows } = await sql<{ n: string }>`select count(*) as n from pg_proc where proname = 'gw_batch'`.execute(store.db);
        expect(Number(rows[0]!.n)).toBe(0);
      }
    });

    if (kind === "postgres") {
      it("creates the billing functions afresh on a database up to date", async () => {
        database = await createTestDatabase(kind);
        store = await open();
        const count = async (s: Store) => Number((await sql<{ n: string }>`select count(*) as n from pg_proc where proname = 'gw_batch'`.execute(s.db)).rows[0]!.n);
        expect(await count(store)).toBe(1);
        await sql`drop function gw_batch`.execute(store.db);
        await store.close();
        store = await open();
        expect(await count(store)).toBe(1);
      });
    }
  });
}
