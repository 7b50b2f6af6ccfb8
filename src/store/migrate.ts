// Migrations run at start and with `gateway migrate`. Kysely's migrator takes a lock, so several
// gateway processes starting together against one PostgreSQL apply each migration once.
// On PostgreSQL the billing functions (gw-batch-function.ts) are then created afresh from their one definition.
// openStore runs this module only when the database is behind the code (migration-names.ts).
// The numbered migrations are frozen: they import nothing that changes with the code (their column lists
// are literals), only builders that take those lists as parameters (dimension-sql.ts, ledger-chain-sql.ts).
import { Migrator, sql, type Kysely, type Migration, type MigrationResultSet } from "kysely";
import type { DatabaseHandle } from "./database.js";
import * as initial from "./migrations/0001-initial.js";
import * as billingFunctions from "./migrations/0002-billing-functions.js";
import * as billingBatchState from "./migrations/0003-billing-batch-state.js";
import * as leanBillingTables from "./migrations/0004-lean-billing-tables.js";
import * as ledgerAppendOnlyGaps from "./migrations/0005-ledger-append-only-gaps.js";
import * as upstreamHealth from "./migrations/0006-upstream-health.js";
import * as ledgerDeployment from "./migrations/0007-ledger-deployment.js";
import * as pricingDimensions from "./migrations/0008-pricing-dimensions.js";
import * as outputClamping from "./migrations/0009-output-clamping.js";
import * as ledgerHashChain from "./migrations/0010-ledger-hash-chain.js";
import * as ledgerAttempts from "./migrations/0011-ledger-attempts.js";
import * as trafficLimits from "./migrations/0012-traffic-limits.js";
import * as keyPolicies from "./migrations/0013-key-policies.js";
import * as adminApi from "./migrations/0014-admin-api.js";
import * as requestLog from "./migrations/0015-request-log.js";
import * as codesAndUpstreamErrors from "./migrations/0016-codes-and-upstream-errors.js";
import * as usageRollup from "./migrations/0017-usage-rollup.js";
import * as fewerWriteIndexes from "./migrations/0018-fewer-write-indexes.js";
import * as ledgerAccountTime from "./migrations/0019-ledger-account-time.js";
import * as ledgerChainLookups from "./migrations/0020-ledger-chain-lookups.js";
import * as namedBillingOperations from "./migrations/0021-named-billing-operations.js";
import * as attemptThrottle from "./migrations/0022-attempt-throttle.js";
import * as ledgerKeyedChain from "./migrations/0023-ledger-keyed-chain.js";
import * as passwordLinks from "./migrations/0024-password-links.js";
import * as liveCatalog from "./migrations/0025-live-catalog.js";
import * as ledgerPriceFactor from "./migrations/0026-ledger-price-factor.js";
import * as keyStatesAndProbes from "./migrations/0027-key-states-and-probes.js";
import * as requestLogErrors from "./migrations/0028-request-log-errors.js";
import * as budgetScopes from "./migrations/0029-budget-scopes.js";
import * as requestTags from "./migrations/0030-request-tags.js";
import * as mcpAllowlists from "./migrations/0031-mcp-allowlists.js";
import * as stripeEvents from "./migrations/0032-stripe-events.js";
import * as alerts from "./migrations/0033-alerts.js";
import * as requestLogGuardrails from "./migrations/0034-request-log-guardrails.js";
import * as responseCache from "./migrations/0035-response-cache.js";
import * as principalGuardrails from "./migrations/0036-principal-guardrails.js";
import * as mcpSessions from "./migrations/0037-mcp-sessions.js";
import * as mcpServerSecrets from "./migrations/0038-mcp-server-secrets.js";
import * as accountEscrows from "./migrations/0039-account-escrows.js";
import * as holdHolders from "./migrations/0040-hold-holders.js";
import { createBillingFunctions } from "./billing-functions.js";
import type { MigrationName } from "./migration-names.js";

type MigrationModule = { up(db: Kysely<unknown>, dialect: DatabaseHandle["dialect"]): Promise<void> };

/** Every name of MIGRATION_NAMES and no other (the type says so). */
const MIGRATIONS: Record<MigrationName, MigrationModule> = {
  "0001-initial": initial,
  "0002-billing-functions": billingFunctions,
  "0003-billing-batch-state": billingBatchState,
  "0004-lean-billing-tables": leanBillingTables,
  "0005-ledger-append-only-gaps": ledgerAppendOnlyGaps,
  "0006-upstream-health": upstreamHealth,
  "0007-ledger-deployment": ledgerDeployment,
  "0008-pricing-dimensions": pricingDimensions,
  "0009-output-clamping": outputClamping,
  "0010-ledger-hash-chain": ledgerHashChain,
  "0011-ledger-attempts": ledgerAttempts,
  "0012-traffic-limits": trafficLimits,
  "0013-key-policies": keyPolicies,
  "0014-admin-api": adminApi,
  "0015-request-log": requestLog,
  "0016-codes-and-upstream-errors": codesAndUpstreamErrors,
  "0017-usage-rollup": usageRollup,
  "0018-fewer-write-indexes": fewerWriteIndexes,
  "0019-ledger-account-time": ledgerAccountTime,
  "0020-ledger-chain-lookups": ledgerChainLookups,
  "0021-named-billing-operations": namedBillingOperations,
  "0022-attempt-throttle": attemptThrottle,
  "0023-ledger-keyed-chain": ledgerKeyedChain,
  "0024-password-links": passwordLinks,
  "0025-live-catalog": liveCatalog,
  "0026-ledger-price-factor": ledgerPriceFactor,
  "0027-key-states-and-probes": keyStatesAndProbes,
  "0028-request-log-errors": requestLogErrors,
  "0029-budget-scopes": budgetScopes,
  "0030-request-tags": requestTags,
  "0031-mcp-allowlists": mcpAllowlists,
  "0032-stripe-events": stripeEvents,
  "0033-alerts": alerts,
  "0034-request-log-guardrails": requestLogGuardrails,
  "0035-response-cache": responseCache,
  "0036-principal-guardrails": principalGuardrails,
  "0037-mcp-sessions": mcpSessions,
  "0038-mcp-server-secrets": mcpServerSecrets,
  "0039-account-escrows": accountEscrows,
  "0040-hold-holders": holdHolders,
};

/** What migrating needs of a database handle. */
export type MigrationTarget = Pick<DatabaseHandle, "db" | "dialect" | "dimensions">;

export interface MigrationReport {
  applied: string[];
}

/**
 * A migration on a database that serves (ADR 0052) waits at most this long for each table lock: a
 * queued ACCESS EXCLUSIVE lock blocks every later query of its table, and a migration that holds one
 * table while it waits for another can deadlock with a request that holds the second. It gives up
 * before PostgreSQL's deadlock check (deadlock_timeout, 1 s by default) would pick a victim, which
 * could be a request of the release still serving, and tries again.
 */
const SERVING_LOCK_TIMEOUT_MS = 200;
/** How long a migration on a serving database keeps trying to get its locks before start fails. */
const SERVING_LOCK_DEADLINE_MS = 120_000;
/** PostgreSQL's lock_not_available (lock_timeout) and deadlock_detected. */
const LOCK_CONFLICT_SQLSTATES = new Set(["55P03", "40P01"]);

/**
 * Applies the migrations not yet applied, in order, up to `upTo` (a migration's name) or all of them.
 * Several processes starting on one new SQLite file: the losers of the write lock try again.
 */
export async function migrate(handle: MigrationTarget, upTo?: string): Promise<MigrationReport> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrateOnce(handle, upTo);
    } catch (error) {
      const code = String((error as { code?: unknown }).code ?? "");
      if (handle.dialect !== "sqlite" || !code.startsWith("SQLITE_BUSY") || attempt >= 20) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

async function migrateOnce(handle: MigrationTarget, upTo: string | undefined): Promise<MigrationReport> {
  const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrationsFor(handle.dialect, false) } });
  const serving = handle.dialect === "postgres" && (await hasMigrationTable(handle.db));
  const applied = serving ? await migrateServing(handle, upTo) : runResults(upTo === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(upTo));
  // The billing functions follow the code, not a migration (ADR 0009): their current definitions are
  // created on every run up to the latest schema (a run stopped at `upTo` leaves an older schema the
  // current texts may not fit).
  if (handle.dialect === "postgres" && upTo === undefined) await createBillingFunctions(handle.db, handle.dimensions);
  return { applied };
}

/**
 * The pending migrations of a serving PostgreSQL database, each in its own transaction with a lock
 * timeout, so that none holds one table's lock while it waits for the next migration's. One step up
 * at a time (never migrateTo: it goes down to a name another process has already passed). A step that
 * finds a lock busy is tried again, up to a deadline.
 */
async function migrateServing(handle: MigrationTarget, upTo: string | undefined): Promise<string[]> {
  const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrationsFor(handle.dialect, true) } });
  const deadline = Date.now() + SERVING_LOCK_DEADLINE_MS;
  const applied: string[] = [];
  for (let attempt = 1; ;) {
    if (upTo !== undefined && (await migrator.getMigrations()).some((migration) => migration.name === upTo && migration.executedAt !== undefined)) {
      return applied;
    }
    try {
      // Also where Kysely refuses a database that records a migration this code does not know.
      const step = runResults(await migrator.migrateUp());
      if (step.length === 0) return applied;
      applied.push(...step);
    } catch (error) {
      const code = String((error as { code?: unknown }).code ?? "");
      if (!LOCK_CONFLICT_SQLSTATES.has(code) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, Math.min(1000, 25 * attempt++) + Math.random() * 100));
    }
  }
}

/** Whether Kysely's record of migrations exists: the schema has been migrated before, and may be serving. */
async function hasMigrationTable(db: MigrationTarget["db"]): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`select to_regclass('kysely_migration') is not null as found`.execute(db);
  return rows[0]?.found === true;
}

function migrationsFor(dialect: DatabaseHandle["dialect"], lockTimeout: boolean): Record<string, Migration> {
  const migrations: Record<string, Migration> = {};
  for (const [name, module] of Object.entries(MIGRATIONS)) {
    migrations[name] = {
      up: async (db) => {
        // SET LOCAL: only this migration's transaction, which Kysely opens on PostgreSQL.
        if (lockTimeout) await sql.raw(`set local lock_timeout = '${SERVING_LOCK_TIMEOUT_MS}ms'`).execute(db);
        await module.up(db, dialect);
      },
    };
  }
  return migrations;
}

function runResults({ error, results = [] }: MigrationResultSet): string[] {
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return results.filter((r) => r.status === "Success").map((r) => r.migrationName);
}
