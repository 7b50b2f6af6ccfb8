// The recipe's one migration (CONTRIBUTING.md, "Adding a billing dimension"), for the audio_input
// dimension of added-dimension.test.ts: as src/store/migrations/00NN-audio-input.ts it would be this
// file, listed last in migrate.ts. Frozen like every migration: its lists are the previous migrations'
// (0017's summed columns, 0026's chained columns) with its own columns appended, and it calls the
// exported builders with them.
import type { Kysely } from "kysely";
import type { Dialect } from "../../src/store/dialect.js";
import { addDimensionColumns } from "../../src/store/dimension-sql.js";
import type { LedgerChainColumn } from "../../src/store/ledger-chain.js";
import { LEDGER_CHAIN_COLUMNS_AT_0026 } from "../../src/store/migrations/0026-ledger-price-factor.js";
import { ROLLUP_SUMMED_COLUMNS } from "../../src/store/migrations/0017-usage-rollup.js";

/** The dimension's count column and cost column. */
const COLUMNS = ["audio_input_tokens", "audio_input_cost_nano"];

/** usage_hourly's summed columns from this migration on (a later one appends to these). */
export const ROLLUP_SUMMED_COLUMNS_AT_AUDIO: readonly string[] = [...ROLLUP_SUMMED_COLUMNS, ...COLUMNS];

/** The chain's columns from this migration on, the new ones appended (a later one appends to these). */
export const LEDGER_CHAIN_COLUMNS_AT_AUDIO: readonly LedgerChainColumn[] = [...LEDGER_CHAIN_COLUMNS_AT_0026, ...COLUMNS.map((name) => ({ name, type: "integer" as const }))];

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await addDimensionColumns(db, dialect, { columns: COLUMNS, summed: ROLLUP_SUMMED_COLUMNS_AT_AUDIO, chained: LEDGER_CHAIN_COLUMNS_AT_AUDIO });
}
