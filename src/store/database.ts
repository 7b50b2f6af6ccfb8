// Opens the one schema on either database: SQLite (embedded default, WAL) or PostgreSQL
// (DATABASE_URL=postgres://...). Both return integers as bigint so money never passes through a float.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, PostgresDialect, SqliteAdapter, SqliteDialect, type DialectAdapter, type SqliteDatabase as KyselySqlite } from "kysely";
import { DIMENSIONS, dimensionSet, type DimensionSet, type DimensionSpec } from "../core/dimensions.js";
import type { Dialect } from "./dialect.js";
import { ledgerChainColumns, ledgerRowHashFromValues, SQLITE_LEDGER_HASH_FUNCTION } from "./ledger-chain.js";
import { LedgerChainKey, LedgerChainState, withLedgerKeyOption } from "./ledger-chain-key.js";
import { SqliteBusyWait } from "./sqlite-busy-wait.js";
import { startSqliteCheckpointer } from "./sqlite-checkpointer.js";
import { DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts } from "./database-timeouts.js";
import type { Database } from "./tables.js";

export { DEFAULT_DATABASE_TIMEOUTS, type DatabaseTimeouts };

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /**
   * SQLite only: the connection under `db`, for the billing write path, which runs its statements
   * synchronously inside one Kysely connection lease (src/store/sqlite-writer.ts). Null on PostgreSQL.
   */
  sqlite: SqliteDatabase.Database | null;
  /** Where it lives, without credentials, for log lines. */
  description: string;
  /**
   * The billing dimensions of this database: the ledger columns the chain hashes, the billing
   * functions migrate.ts creates, what StoreBilling prices, writes and reports. DIMENSION_SET but in
   * tests that add a dimension to a copy of the list (test/billing/added-dimension.test.ts).
   */
  dimensions: DimensionSet;
  /**
   * PostgreSQL only: calls `onNotify` for each NOTIFY on `channel`, on a connection of its own (a
   * pooled one would miss notifications between queries). Answers how to stop listening.
   */
  listen?(channel: string, onNotify: () => void, onError: (error: unknown) => void): Promise<() => Promise<void>>;
  /**
   * How this process seals the ledger rows it appends (ledger-chain-key.ts): unkeyed without
   * GATEWAY_LEDGER_SECRET; with it, "pending" until openStore has read the chain's keys.
   */
  ledgerChain: LedgerChainState;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl: string | null;
  sqlitePath: string;
  /** PostgreSQL pool size per gateway process. */
  poolSize?: number;
  /**
   * SQLite: checkpoint the WAL in a worker thread instead of on the committing request (for the
   * long-running server; short CLI commands keep SQLite's automatic checkpoints).
   */
  backgroundCheckpoints?: { onError(message: string): void };
  /** The dimension list (core/dimensions.ts); default DIMENSIONS. */
  dimensions?: readonly DimensionSpec[];
  /** GATEWAY_LEDGER_SECRET: the ledger chain's key is derived from it (ledger-chain-key.ts); null or absent: none. */
  ledgerSecret?: string | null;
  /** PostgreSQL: how long to wait for a connection and for each query's answer; absent: DEFAULT_DATABASE_TIMEOUTS. */
  timeouts?: DatabaseTimeouts;
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  const dimensions = dimensionSet(options.dimensions ?? DIMENSIONS);
  const chain = new LedgerChainState(options.ledgerSecret ? new LedgerChainKey(options.ledgerSecret) : null);
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10, options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS, dimensions, chain);
  return openSqlite(options.sqlitePath, options.backgroundCheckpoints ?? null, dimensions, chain);
}

// SQLite runs DDL inside transactions just fine; telling Kysely so makes each migration atomic,
// and a second process migrating at the same moment fails with SQLITE_BUSY (retried in migrate.ts)
// instead of half-applying a migration.
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class GatewaySqliteDialect extends SqliteDialect {
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

const STATEMENT_CACHE_SIZE = 512;

/**
 * Kysely's SQLite driver prepares every statement again on every query; preparing is a real cost
 * on the request path (measured in bench/). This keeps prepared statements by SQL text. A cached
 * statement still iterating (busy) is never handed out twice: a fresh one is prepared instead.
 */
export function withStatementCache(sqlite: SqliteDatabase.Database): KyselySqlite {
  const cache = new Map<string, SqliteDatabase.Statement>();
  // Kysely runs each statement right after preparing it: the place to make it wait for the write
  // lock as configured, since the billing writer leaves waiting off (src/store/sqlite-busy-wait.ts).
  const busyWait = SqliteBusyWait.of(sqlite);
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      busyWait.waitForLock();
      const cached = cache.get(sql);
      if (cached && !cached.busy) return cached;
      const statement = sqlite.prepare(sql);
      if (!cached) {
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}

/**
 * Switching a file to WAL takes an exclusive lock, and two processes opening one new file at once
 * (two `gateway serve`, or the workers' primary and `gateway migrate`) can see SQLITE_BUSY from the
 * pragma whatever the busy timeout: the loser waits a little and tries again. Start-up only.
 */
function switchToWal(sqlite: SqliteDatabase.Database): void {
  for (let attempt = 1; ; attempt++) {
    try {
      sqlite.pragma("journal_mode = WAL");
      return;
    } catch (error) {
      if (!String((error as { code?: unknown }).code ?? "").startsWith("SQLITE_BUSY") || attempt >= 100) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20 + Math.floor(Math.random() * 30));
    }
  }
}

function openSqlite(path: string, backgroundCheckpoints: DatabaseOptions["backgroundCheckpoints"] | null, dimensions: DimensionSet, chain: LedgerChainState): DatabaseHandle {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SqliteDatabase(path);
  switchToWal(sqlite);
  sqlite.pragma("synchronous = NORMAL");
  sqlite.pragma("foreign_keys = ON");
  sqlite.pragma("busy_timeout = 5000");
  sqlite.defaultSafeIntegers(true);
  // The ledger's chain trigger (migration 0010) hashes each new row with this; a connection without
  // it cannot append ledger rows, which is as intended (docs/storage.md). The trigger passes the values
  // of the chain's columns as the latest migration listed them: those of the dimension set. With a
  // ledger secret the hash is sealed with its key (ledger-chain-key.ts); a locked chain throws.
  const chained = ledgerChainColumns(dimensions);
  sqlite.function(SQLITE_LEDGER_HASH_FUNCTION, { deterministic: true, varargs: true, safeIntegers: true }, (previous, ...values) =>
    chain.seal(ledgerRowHashFromValues(previous, values, chained)),
  );
  const checkpointer =
    backgroundCheckpoints && path !== ":memory:"
      ? startSqliteCheckpointer(path, { onReport: (report) => report.type === "error" && backgroundCheckpoints.onError(report.message ?? "unknown error") })
      : null;
  if (checkpointer) sqlite.pragma("wal_autocheckpoint = 0");
  const db = new Kysely<Database>({ dialect: new GatewaySqliteDialect({ database: withStatementCache(sqlite) }) });
  return {
    db,
    dialect: "sqlite",
    sqlite,
    description: `sqlite:${path}`,
    dimensions,
    ledgerChain: chain,
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

async function openPostgres(url: string, max: number, timeouts: DatabaseTimeouts, dimensions: DimensionSet, chain: LedgerChainState): Promise<DatabaseHandle> {
  if (!/^postgres(ql)?:\/\//.test(url)) throw new Error("DATABASE_URL must start with postgres:// or postgresql://");
  // Loaded only here: a SQLite gateway never needs the driver (~3 MiB of heap for nothing).
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({
    // With a ledger secret every connection starts with the chain's key in a session setting, which the
    // trigger ledger_chain_key reads (ledger-chain-key.ts): a startup option, never a statement.
    connectionString: chain.key === null ? url : withLedgerKeyOption(url, chain.key),
    max,
    connectionTimeoutMillis: timeouts.connectMs,
    query_timeout: timeouts.queryMs,
    // Idle connections to a vanished server are found by the kernel instead of by the next request.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    types: {
      getTypeParser: ((oid: Parameters<typeof pg.types.getTypeParser>[0], format?: "text" | "binary"): unknown =>
        oid === pg.types.builtins.INT8 ? (text: string) => BigInt(text) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A dropped idle connection must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  pool.on("connect", (client) => guardPooledClient(client));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const parsed = new URL(url);
  const listen = async (channel: string, onNotify: () => void, onError: (error: unknown) => void) => {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeouts.connectMs, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
    // A dropped connection is reported, not thrown: the catalog watch's poll covers it.
    client.on("error", onError);
    client.on("notification", (message) => {
      if (message.channel === channel) onNotify();
    });
    await client.connect();
    await client.query(`LISTEN ${channel}`);
    return async () => {
      await client.end().catch(() => undefined);
    };
  };
  return { db, dialect: "postgres", sqlite: null, description: `postgres://${parsed.host}${parsed.pathname}`, dimensions, listen, ledgerChain: chain, close: () => db.destroy() };
}

/** The part of a pooled pg client guardPooledClient touches. */
interface GuardedClient {
  on(event: "error", listener: (error: Error) => void): unknown;
  query: unknown;
  end(): Promise<void>;
}

/**
 * pg-pool listens for a client's errors only while the client is idle in the pool: a connection that
 * dies while Kysely holds the client (a query under way, a transaction open) emits an 'error' nobody
 * handles, and the process crashes, so every gateway died at once when PostgreSQL restarted. The
 * query itself fails either way (the driver rejects it), so a listener that does nothing is enough.
 * A query that timed out leaves the client waiting on an answer that may never come; ending it
 * (pg destroys the socket of a client with a query under way) drops it from the pool instead of
 * handing it to the next request.
 */
function guardPooledClient(client: GuardedClient): void {
  client.on("error", () => undefined);
  const query = client.query as (...args: unknown[]) => unknown;
  client.query = (...args: unknown[]): unknown => {
    const result = query.apply(client, args);
    if (result instanceof Promise) {
      result.catch((error: unknown) => {
        if (error instanceof Error && error.message === "Query read timeout") client.end().catch(() => undefined);
      });
    }
    return result;
  };
}
