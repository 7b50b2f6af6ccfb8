// The SQLite WAL is checkpointed by a worker thread (src/store/sqlite-checkpointer.ts), not by the
// committing request: the server's connection has automatic checkpoints off, the worker copies the
// WAL into the database file in the background, restarts an overgrown WAL, and stops with the store.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { sql } from "kysely";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { startSqliteCheckpointer, type CheckpointReport } from "../../src/store/sqlite-checkpointer.js";

const dirs: string[] = [];
function newPath(): string {
  const dir = mkdtempSync(join(tmpdir(), "gw-ckpt-"));
  dirs.push(dir);
  return join(dir, "gateway.db");
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function walWriter(path: string): SqliteDatabase.Database {
  const db = new SqliteDatabase(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.pragma("wal_autocheckpoint = 0");
  db.exec("create table t (id integer primary key, body text)");
  return db;
}

function until(reports: CheckpointReport[], accept: (r: CheckpointReport) => boolean, ms = 5_000): Promise<CheckpointReport> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const poll = () => {
      const found = reports.find(accept);
      if (found) return resolve(found);
      if (Date.now() - started > ms) return reject(new Error(`no matching report in ${ms} ms: ${JSON.stringify(reports.slice(-3))}`));
      setTimeout(poll, 10);
    };
    poll();
  });
}

describe("SQLite background checkpoints", () => {
  it("copies the WAL into the database file while the writer has automatic checkpoints off", async () => {
    const path = newPath();
    const db = walWriter(path);
    const insert = db.prepare("insert into t (body) values (?)");
    for (let i = 0; i < 500; i++) insert.run("x".repeat(500));
    expect(statSync(path).size).toBeLessThan(20_000);
    const reports: CheckpointReport[] = [];
    const checkpointer = startSqliteCheckpointer(path, { intervalMs: 20, onReport: (r) => reports.push(r) });
    try {
      const done = await until(reports, (r) => r.type === "checkpoint" && (r.log ?? 0) > 0 && r.checkpointed === r.log);
      expect(done.log).toBeGreaterThan(50);
      expect(reports.filter((r) => r.type === "error")).toEqual([]);
    } finally {
      await checkpointer.stop();
    }
    // The rows are now in the database file itself (it held only the schema before).
    expect(statSync(path).size).toBeGreaterThan(250_000);
    db.close();
  });

  it("restarts a WAL that grew past the limit, so that it is reused from the start", async () => {
    const path = newPath();
    const db = walWriter(path);
    const insert = db.prepare("insert into t (body) values (?)");
    for (let i = 0; i < 300; i++) insert.run("y".repeat(500));
    const reports: CheckpointReport[] = [];
    const checkpointer = startSqliteCheckpointer(path, { intervalMs: 20, restartFrames: 20, onReport: (r) => reports.push(r) });
    try {
      await until(reports, (r) => r.type === "checkpoint" && (r.log ?? 0) > 20);
      // After the RESTART checkpoint the next commit writes at the start of the WAL again.
      insert.run("z");
      const small = await until(reports, (r) => r.type === "checkpoint" && (r.log ?? 0) > 0 && (r.log ?? 0) <= 5);
      expect(small.log).toBeLessThanOrEqual(5);
    } finally {
      await checkpointer.stop();
      db.close();
    }
  });

  it("reports a failure (never throws into the server) and stops cleanly", async () => {
    const reports: CheckpointReport[] = [];
    const checkpointer = startSqliteCheckpointer(join(newPath(), "missing", "nothing.db"), { intervalMs: 20, onReport: (r) => reports.push(r) });
    const failure = await until(reports, (r) => r.type === "error");
    expect(failure.message).toMatch(/unable to open|directory|exist/i);
    await checkpointer.stop();
  });

  it("openDatabase with background checkpoints: automatic checkpoints off, worker stopped on close", async () => {
    const path = newPath();
    const errors: string[] = [];
    const handle = await openDatabase({ databaseUrl: null, sqlitePath: path, backgroundCheckpoints: { onError: (m) => errors.push(m) } });
    const { rows } = await sql<{ wal_autocheckpoint: number | bigint }>`pragma wal_autocheckpoint`.execute(handle.db);
    expect(Number(rows[0]!.wal_autocheckpoint)).toBe(0);
    await handle.close();
    expect(errors).toEqual([]);
    const plain = await openDatabase({ databaseUrl: null, sqlitePath: newPath() });
    const { rows: plainRows } = await sql<{ wal_autocheckpoint: number | bigint }>`pragma wal_autocheckpoint`.execute(plain.db);
    expect(Number(plainRows[0]!.wal_autocheckpoint)).toBe(1000);
    await plain.close();
  });
});
