// How both drivers return numbers: every integer as bigint (SQLite with safeIntegers, PostgreSQL int8
// parsed to BigInt); timestamps are epoch milliseconds.
export type Int = bigint;
export type Stamp = bigint;
