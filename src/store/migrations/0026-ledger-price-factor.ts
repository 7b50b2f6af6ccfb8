// A usage row records the price factor of its account's tier (src/core/price-factor.ts; ADR 0035) in
// millionths: 1500000 for a tier with price_factor "1.5"; null when the tier has none (list prices),
// and on balance rows and every earlier row. The hash chain covers it (ledger-chain.ts), so a factor
// cannot be changed afterwards without `ledger verify` naming the row: the triggers are applied again
// with it appended; a null contributes nothing to the encoding, so every existing hash stays valid.
import { sql, type Kysely } from "kysely";
import type { Dialect } from "../dialect.js";
import { applyLedgerChainTriggers } from "../ledger-chain-sql.js";
import type { LedgerChainColumn } from "../ledger-chain.js";
import { LEDGER_CHAIN_COLUMNS_AT_0011 } from "./0011-ledger-attempts.js";

/** The chain's columns from this migration on (frozen): 0011's and the new column, appended. */
export const LEDGER_CHAIN_COLUMNS_AT_0026: readonly LedgerChainColumn[] = [...LEDGER_CHAIN_COLUMNS_AT_0011, { name: "price_factor_ppm", type: "integer" }];

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .alterTable("ledger")
    .addColumn("price_factor_ppm", "bigint", (c) => c.check(sql`price_factor_ppm is null or (price_factor_ppm > 0 and price_factor_ppm <= 1000000000)`))
    .execute();
  await applyLedgerChainTriggers(db, dialect, LEDGER_CHAIN_COLUMNS_AT_0026);
}
