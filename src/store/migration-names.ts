// The numbered migrations' names (migrations/), in order: what a database up to date with the code
// has recorded in kysely_migration. migrate.ts maps each name to its module (the compiler checks that
// the two lists agree); openStore compares this list with the recorded one, so that opening a
// database already up to date (every admin command, every restart) loads no migration module.
export const MIGRATION_NAMES = [
  "0001-initial",
  "0002-billing-functions",
  "0003-billing-batch-state",
  "0004-lean-billing-tables",
  "0005-ledger-append-only-gaps",
  "0006-upstream-health",
  "0007-ledger-deployment",
  "0008-pricing-dimensions",
  "0009-output-clamping",
  "0010-ledger-hash-chain",
  "0011-ledger-attempts",
  "0012-traffic-limits",
  "0013-key-policies",
  "0014-admin-api",
  "0015-request-log",
  "0016-codes-and-upstream-errors",
  "0017-usage-rollup",
  "0018-fewer-write-indexes",
  "0019-ledger-account-time",
  "0020-ledger-chain-lookups",
  "0021-named-billing-operations",
  "0022-attempt-throttle",
  "0023-ledger-keyed-chain",
  "0024-password-links",
  "0025-live-catalog",
  "0026-ledger-price-factor",
  "0027-key-states-and-probes",
  "0028-request-log-errors",
  "0029-budget-scopes",
  "0030-request-tags",
  "0031-mcp-allowlists",
  "0032-stripe-events",
  "0033-alerts",
  "0034-request-log-guardrails",
  "0035-response-cache",
  "0036-principal-guardrails",
] as const;

export type MigrationName = (typeof MIGRATION_NAMES)[number];
