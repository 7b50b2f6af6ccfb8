// Replicas starting together on one new PostgreSQL database (a Deployment scaled to 3): each
// `gateway serve` migrates at start. Kysely's migrator holds a session-level pg_advisory_lock (a
// fixed key, a one-hour lock_timeout) while it migrates and the billing functions are recreated
// under an advisory lock of their own (billing-functions.ts), so each migration is applied once and
// every replica starts and serves. Without the migrator's lock the in-process race below fails
// with duplicate keys in the catalogue (checked by hand when this test was written).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql } from "kysely";
import { afterAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { migrate } from "../../src/store/migrate.js";
import { MIGRATION_NAMES } from "../../src/store/migration-names.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { killAll, PROCESS_TEST_TIMEOUT_MS, startGateway, waitUntilHealthy } from "./gateway-process.js";

afterAll(() => killAll());

describe.runIf(DATABASE_KINDS.includes("postgres"))("replicas starting together on PostgreSQL", () => {
  it(
    "three gateways started at once on a new database apply each migration once and all serve",
    async () => {
      const database = await createTestDatabase("postgres");
      const dirs = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), "gw-replica-")));
      try {
        const env = { DATABASE_URL: database.databaseUrl!, GATEWAY_SECRET: database.secret };
        const gateways = await Promise.all(dirs.map((dir) => startGateway(dir, { ...env, GATEWAY_DATA_DIR: dir })));
        await Promise.all(gateways.map((gateway) => waitUntilHealthy(gateway)));
        for (const gateway of gateways) {
          const ready = await fetch(`${gateway.baseUrl}/readyz`);
          expect(ready.status).toBe(200);
        }

        const handle = await openDatabase({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath });
        try {
          const { rows } = await sql<{ name: string; times: string }>`select name, count(*)::text as times from kysely_migration group by name order by name`.execute(handle.db);
          expect(rows.map((row) => row.name)).toEqual([...MIGRATION_NAMES]);
          expect(rows.every((row) => row.times === "1")).toBe(true);
        } finally {
          await handle.close();
        }

        // One administrator account, printed by the one replica that created it.
        expect(gateways.filter((gateway) => gateway.stderr().includes("First start: created an administrator account")).length).toBe(1);

        for (const gateway of gateways) gateway.child.kill("SIGTERM");
        const exits = await Promise.all(gateways.map((gateway) => gateway.exited(30_000)));
        expect(exits.map((exit) => exit.code)).toEqual([0, 0, 0]);
        for (const gateway of gateways) expect(gateway.stderr()).not.toMatch(/error|concurrently/i);
      } finally {
        killAll();
        await database.drop();
        for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      }
    },
    PROCESS_TEST_TIMEOUT_MS,
  );

  it("three migrations run at once on a new database: one applies everything, the others find nothing to do", async () => {
    const database = await createTestDatabase("postgres");
    const handles = await Promise.all([0, 1, 2].map(() => openDatabase({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath })));
    try {
      const reports = await Promise.all(handles.map((handle) => migrate(handle)));
      const counts = reports.map((report) => report.applied.length).sort((a, b) => a - b);
      expect(counts).toEqual([0, 0, MIGRATION_NAMES.length]);
      expect(reports.find((report) => report.applied.length > 0)!.applied).toEqual([...MIGRATION_NAMES]);
    } finally {
      for (const handle of handles) await handle.close();
      await database.drop();
    }
  }, 60_000);
});
