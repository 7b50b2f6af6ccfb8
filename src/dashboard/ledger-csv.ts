// The account's ledger as CSV lines, newest first, a page of CSV_PAGE_ROWS at a time (keyset by id on
// ledger_account_chain), so that a large ledger never sits in memory and the first bytes leave after
// one page: GET /dashboard/api/ledger.csv streams it, and bench/ledger-growth.ts times it.
import { LEDGER_CSV_COLUMNS, ledgerPage, ledgerRowsView, type LedgerDatabase } from "../admin/usage-queries.js";

export const CSV_PAGE_ROWS = 1000;

/** RFC 4180 quoting, and a leading quote on text a spreadsheet would run as a formula. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return "";
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** The header line, then one string per page of rows; `since` (epoch ms): only rows created from then on. */
export async function* ledgerCsvLines(database: LedgerDatabase, accountId: string, since?: bigint): AsyncGenerator<string> {
  yield `${LEDGER_CSV_COLUMNS.join(",")}\r\n`;
  let before: bigint | undefined;
  for (;;) {
    const rows = await ledgerPage(database, accountId, { limit: CSV_PAGE_ROWS, ...(before !== undefined && { before }), ...(since !== undefined && { since }) });
    if (rows.length === 0) return;
    yield (await ledgerRowsView(database.db, rows))
      .map((view) => {
        const v: Record<string, unknown> = view;
        return `${LEDGER_CSV_COLUMNS.map((c) => csvCell(v[c])).join(",")}\r\n`;
      })
      .join("");
    // A short page is the last: no query for the empty one after it.
    if (rows.length < CSV_PAGE_ROWS) return;
    before = rows[rows.length - 1]!.id;
  }
}
