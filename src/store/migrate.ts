// Migrations run at start and with `gateway migrate`. Kysely's migrator takes a lock, so several
// gateway processes starting together against one PostgreSQL apply each migration once.
// On PostgreSQL the billing functions (gw-batch-function.ts) are then created afresh from their one definition.
// openStore runs this module only when the database is behind the code (migration-names.ts).
// The numbered migrations are frozen: they import nothing that changes with the code (their column lists
// are literals), only builders that take those lists as parameters (dimension-sql.ts, ledger-chain-sql.ts).
import { Migrator, type Kysely, type Migration } from "kysely";
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
};

/** What migrating needs of a database handle. */
export type MigrationTarget = Pick<DatabaseHandle, "db" | "dialect" | "dimensions">;

export interface MigrationReport {
  applied: string[];
}

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
  const migrations: Record<string, Migration> = {};
  for (const [name, module] of Object.entries(MIGRATIONS)) {
    migrations[name] = { up: (db) => module.up(db, handle.dialect) };
  }
  const migrator = new Migrator({ db: handle.db, provider: { getMigrations: async () => migrations } });
  const { error, results = [] } = upTo === undefined ? await migrator.migrateToLatest() : await migrator.migrateTo(upTo);
  if (error) throw error instanceof Error ? error : new Error(String(error));
  // The billing functions follow the code, not a migration (ADR 0009): their current definitions are
  // created on every run up to the latest schema (a run stopped at `upTo` leaves an older schema the
  // current texts may not fit).
  if (handle.dialect === "postgres" && upTo === undefined) await createBillingFunctions(handle.db, handle.dimensions);
  return { applied: results.filter((r) => r.status === "Success").map((r) => r.migrationName) };
}
