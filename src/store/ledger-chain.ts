// The ledger's hash chain (docs/storage.md, "The ledger is a hash chain"; ADR 0011). Each row's
// `hash` is SHA-256, lowercase hex, over the previous hash of the same account followed by the row's
// canonical encoding. The first row of an account chains to LEDGER_GENESIS_HASH.
//
// This file is the one definition of the encoding: the SQLite trigger calls ledgerRowHash through a
// registered SQL function (database.ts), the PostgreSQL trigger computes the same bytes in SQL
// generated from the chain's columns as each migration lists them (ledger-chain-sql.ts), and the
// verifier and the migration that chains existing rows call ledgerRowHash directly. With
// GATEWAY_LEDGER_SECRET the stored hash is this one sealed with an HMAC from the row the chain is keyed
// from (ledger-chain-key.ts; ADR 0032), and the next row chains to the stored, sealed one.
import { hash } from "node:crypto";
import { BASE_COUNT_COLUMNS, DIMENSION_SET, type DimensionSet } from "../core/dimensions.js";

export type LedgerChainColumnType = "integer" | "text";
export interface LedgerChainColumn {
  readonly name: string;
  readonly type: LedgerChainColumnType;
}

const integer = (name: string): LedgerChainColumn => ({ name, type: "integer" });
const text = (name: string): LedgerChainColumn => ({ name, type: "text" });

/**
 * The ledger columns a row's hash covers, in encoding order, as migrations 0010 and 0011 left them:
 * every column except `id` (a storage detail; the chain itself fixes the order) and `hash`. Their
 * order can never change (it would change every hash), so they are listed here literally, equal to
 * the list of migration 0011 (test/storage/frozen-migrations.test.ts). A column added later is
 * appended (ledgerChainColumns). A column whose value is null, or 0 for an integer column, contributes
 * nothing to the encoding, so adding a column whose default is null or 0 leaves every existing hash
 * valid.
 */
const CHAIN_COLUMNS_AT_0011: readonly LedgerChainColumn[] = [
  integer("created_at"),
  text("account_id"),
  text("key_id"),
  text("request_id"),
  text("kind"),
  text("model"),
  text("provider"),
  text("route"),
  integer("input_tokens"),
  integer("cached_tokens"),
  integer("output_tokens"),
  integer("reasoning_tokens"),
  integer("cost_nano"),
  integer("estimated"),
  text("note"),
  text("deployment"),
  // Counts and costs per pricing dimension and the cache saving (migration 0008).
  ...[
    "cache_write_5m_tokens",
    "cache_write_1h_tokens",
    "web_search_calls",
    "images",
    "video_seconds",
    "input_cost_nano",
    "cached_input_cost_nano",
    "cache_write_5m_cost_nano",
    "cache_write_1h_cost_nano",
    "output_cost_nano",
    "web_search_cost_nano",
    "request_cost_nano",
    "image_cost_nano",
    "video_cost_nano",
    "cache_saving_nano",
  ].map(integer),
  // Upstream attempts of a usage row (migration 0011); null on other rows.
  integer("attempts"),
];

/** Appended by migration 0026: the tier's price factor of a usage row (null: none). */
const CHAIN_COLUMNS_AT_0026: readonly LedgerChainColumn[] = [...CHAIN_COLUMNS_AT_0011, integer("price_factor_ppm")];

const chains = new WeakMap<DimensionSet, readonly LedgerChainColumn[]>();

/**
 * The columns the chain covers for a dimension set: those of migration 0026, then each later
 * dimension's count column (when it records one) and cost column, in list order, as the migration
 * adding it appends them (dimension-sql.ts addDimensionColumns).
 */
export function ledgerChainColumns(dimensions: DimensionSet): readonly LedgerChainColumn[] {
  let columns = chains.get(dimensions);
  if (columns === undefined) {
    const known = new Set(CHAIN_COLUMNS_AT_0026.map((c) => c.name));
    const added = dimensions.list.flatMap((d) => [d.countColumn, d.costColumn]).filter((c): c is string => c !== null && !BASE_COUNT_COLUMNS.has(c) && !known.has(c));
    columns = [...CHAIN_COLUMNS_AT_0026, ...added.map(integer)];
    chains.set(dimensions, columns);
  }
  return columns;
}

/** The chain's columns for the gateway's dimensions. */
export const LEDGER_CHAIN_COLUMNS: readonly LedgerChainColumn[] = ledgerChainColumns(DIMENSION_SET);

/** What the first row of every account chains to. */
export const LEDGER_GENESIS_HASH = "0".repeat(64);

/** The first line of every encoding: names this encoding, so a future one can be told apart. */
export const LEDGER_ENCODING_TAG = "gateway-ledger-v1";

/** The SQLite function the chain trigger calls: gw_ledger_hash(prev, then the columns in order). */
export const SQLITE_LEDGER_HASH_FUNCTION = "gw_ledger_hash";

/** Each column's `name=` prefix in the encoding, per column list (built once for each). */
const prefixesOf = new WeakMap<readonly LedgerChainColumn[], readonly string[]>();

function prefixes(columns: readonly LedgerChainColumn[]): readonly string[] {
  let found = prefixesOf.get(columns);
  if (found === undefined) prefixesOf.set(columns, (found = columns.map((column) => `${column.name}=`)));
  return found;
}

/**
 * The bytes hashed for one row: the tag, a newline, the previous hash, a newline, then for each
 * column in `columns` order that has a value: `name=LENGTH:VALUE` and a newline, where VALUE is the
 * decimal integer or the text and LENGTH its UTF-8 byte length.
 */
export function ledgerChainEncoding(previousHash: string, row: Readonly<Record<string, unknown>>, columns: readonly LedgerChainColumn[] = LEDGER_CHAIN_COLUMNS): string {
  return ledgerChainEncodingOfValues(
    previousHash,
    columns.map((column) => row[column.name]),
    columns,
  );
}

/** `columns`: the chain's columns (a migration passes those of its own time). */
export function ledgerRowHash(previousHash: string, row: Readonly<Record<string, unknown>>, columns: readonly LedgerChainColumn[] = LEDGER_CHAIN_COLUMNS): string {
  return hash("sha256", ledgerChainEncoding(previousHash, row, columns), "hex");
}

/**
 * The same hash from the row's values in `columns` order, as the SQLite trigger passes them and as
 * SQLite settlement binds them (a null or absent previous hash is the genesis). Settlement calls this
 * once per request, so it builds no object per row (bench/results/history/2026-11-24T1920-settlement-on-sqlite.md).
 */
export function ledgerRowHashFromValues(previousHash: unknown, values: readonly unknown[], columns: readonly LedgerChainColumn[] = LEDGER_CHAIN_COLUMNS): string {
  return hash("sha256", ledgerChainEncodingOfValues(typeof previousHash === "string" ? previousHash : LEDGER_GENESIS_HASH, values, columns), "hex");
}

function ledgerChainEncodingOfValues(previousHash: string, values: readonly unknown[], columns: readonly LedgerChainColumn[]): string {
  const names = prefixes(columns);
  let text = `${LEDGER_ENCODING_TAG}\n${previousHash}\n`;
  for (let i = 0; i < names.length; i++) {
    const value = encodedValue(columns[i]!.type, values[i]);
    if (value === null) continue;
    // A decimal integer is ASCII: its length is its byte length.
    const bytes = typeof values[i] === "bigint" ? value.length : Buffer.byteLength(value, "utf8");
    text += `${names[i]}${bytes}:${value}\n`;
  }
  return text;
}

function encodedValue(type: LedgerChainColumnType, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (type === "integer") {
    if (typeof value === "bigint") return value === 0n ? null : value.toString();
    if (typeof value === "number" && Number.isInteger(value)) return value === 0 ? null : BigInt(value).toString();
    return String(value);
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString("utf8");
  return String(value);
}
