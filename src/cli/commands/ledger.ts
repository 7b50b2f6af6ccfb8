import type { LedgerVerifyProgress, LedgerVerifyResult } from "../../store/ledger-verify.js";
import type { Store } from "../../store/index.js";
import { cliActor } from "./cli-actor.js";
import { emit, parseCommand, requireOption, UsageError, type CliIo } from "../io.js";

const USAGE = "usage: gateway admin ledger prune --older-than-days N | verify [--account ID]";

/** The exit code: 1 when `verify` finds a broken link. */
export async function ledgerCommand(sub: string | undefined, args: string[], io: CliIo, store: Store): Promise<number> {
  if (sub === "prune") return prune(args, io, store);
  if (sub === "verify") return verify(args, io, store);
  throw new UsageError(USAGE);
}

async function prune(args: string[], io: CliIo, store: Store): Promise<number> {
  const { values, json } = parseCommand(args, { "older-than-days": { type: "string" } }, []);
  const text = requireOption(values, "older-than-days");
  if (!/^\d{1,6}$/.test(text)) throw new UsageError(`--older-than-days: "${text}" is not a whole number of days`);
  const days = Number(text);
  const deleted = await store.audited(cliActor(), async (tx) => {
    const count = await tx.ledger.prune(days);
    if (count > 0) await tx.record({ action: "ledger.prune", targetType: "ledger", targetId: "ledger", before: null, after: { older_than_days: days, deleted: count } });
    return count;
  });
  emit(io, json, { deleted }, () => `deleted ${deleted} ledger rows older than ${text} days`);
  return 0;
}

// Progress goes to stderr (stdout stays the result, --json included) at most once a second.
const PROGRESS_INTERVAL_MS = 1000;

async function verify(args: string[], io: CliIo, store: Store): Promise<number> {
  const { values, json } = parseCommand(args, { account: { type: "string" } }, []);
  const accountId = values.account === undefined ? undefined : requireOption(values, "account");
  if (accountId !== undefined && accountId.length > 200) throw new UsageError("--account: too long for an account id");
  let lastReport = Date.now();
  const onProgress = (progress: LedgerVerifyProgress) => {
    const now = Date.now();
    if (now - lastReport < PROGRESS_INTERVAL_MS) return;
    lastReport = now;
    io.stderr(`ledger verify: ${progress.rows} rows checked, at id ${progress.atId} of ${progress.lastId}\n`);
  };
  const result = await store.ledger.verify({ ...(accountId !== undefined && { accountId }), onProgress });
  emit(io, json, verifyReport(result), () => verifyText(result));
  return result.broken ? 1 : 0;
}

function verifyReport(result: LedgerVerifyResult) {
  const { broken } = result;
  return {
    ok: broken === null,
    accounts: result.accounts,
    rows: result.rows,
    broken: broken && { row_id: broken.rowId, account_id: broken.accountId, where: broken.where, expected: broken.expected, found: broken.found },
  };
}

function verifyText(result: LedgerVerifyResult): string {
  const { broken } = result;
  if (!broken) return `ledger intact: ${result.accounts} accounts, ${result.rows} rows checked`;
  const what =
    broken.where === "row"
      ? `row ${broken.rowId} (account ${broken.accountId})`
      : `the head of account ${broken.accountId} (its last row: ${broken.rowId ?? "none"}; rows deleted from the end?)`;
  return `ledger chain broken at ${what}: expected hash ${broken.expected}, found ${broken.found ?? "none"} (${result.rows} rows checked)`;
}
