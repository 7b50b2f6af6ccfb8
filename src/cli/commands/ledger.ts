import type { LedgerDifference, LedgerRecomputeResult, LedgerRecomputeStep } from "../../store/ledger-recompute.js";
import type { LedgerVerifyProgress, LedgerVerifyResult } from "../../store/ledger-verify.js";
import type { Store } from "../../store/index.js";
import { cliActor } from "./cli-actor.js";
import { emit, parseCommand, requireOption, UsageError, type CliIo } from "../io.js";

const USAGE = "usage: gateway admin ledger prune --older-than-days N | verify [--account ID]";

/** The exit code: 1 when `verify` finds a broken link, a figure that differs or keyed rows it could not check. */
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

// Progress goes to stderr (stdout stays the result, --json included) at most once a second: the chain
// walk's rows, then each recomputation, once the run has lasted that long (a quick one prints nothing).
const PROGRESS_INTERVAL_MS = 1000;

const STEP_TEXT: Record<LedgerRecomputeStep, string> = {
  accounts: "account balances, spend and holds",
  keys: "key spend, tokens and holds",
  monthly_usage: "monthly usage",
  usage_hourly: "the hourly usage rollup",
};

/** The progress lines of one verify run; `now` and `intervalMs` for tests. */
export function verifyProgress(io: Pick<CliIo, "stderr">, now: () => number = Date.now, intervalMs = PROGRESS_INTERVAL_MS) {
  const started = now();
  let lastReport = started;
  return {
    onProgress: (progress: LedgerVerifyProgress): void => {
      const at = now();
      if (at - lastReport < intervalMs) return;
      lastReport = at;
      io.stderr(`ledger verify: ${progress.rows} rows checked, at id ${progress.atId} of ${progress.lastId}\n`);
    },
    onStep: (step: LedgerRecomputeStep, index: number, of: number): void => {
      const at = now();
      if (at - started < intervalMs) return;
      lastReport = at;
      io.stderr(`ledger verify: recomputing ${STEP_TEXT[step]} from the ledger (${index} of ${of})\n`);
    },
  };
}

/**
 * The hash chains (ledger-verify.ts), then every stored figure the ledger determines (ledger-recompute.ts).
 * Exit 1 for a broken link, a figure that differs, or keyed rows that could not be checked.
 */
async function verify(args: string[], io: CliIo, store: Store): Promise<number> {
  const { values, json } = parseCommand(args, { account: { type: "string" } }, []);
  const accountId = values.account === undefined ? undefined : requireOption(values, "account");
  if (accountId !== undefined && accountId.length > 200) throw new UsageError("--account: too long for an account id");
  const progress = verifyProgress(io);
  const only = accountId !== undefined ? { accountId } : {};
  const chain = await store.ledger.verify({ ...only, onProgress: progress.onProgress });
  const figures = await store.ledger.recompute({ ...only, onStep: progress.onStep });
  const mode = store.handle.ledgerChain.mode;
  if (chain.keyed === undefined && store.handle.ledgerChain.key !== null && mode.kind === "unkeyed") {
    io.stderr("ledger verify: GATEWAY_LEDGER_SECRET is set but the chain is not keyed yet; the next gateway server started with it keys it\n");
  }
  const report = verifyReport(chain, figures);
  emit(io, json, report, () => verifyText(chain, figures));
  return report.ok ? 0 : 1;
}

function verifyReport(chain: LedgerVerifyResult, figures: LedgerRecomputeResult) {
  const { broken, keyed } = chain;
  return {
    ok: broken === null && (keyed?.problem ?? null) === null && figures.differences.length === 0,
    accounts: chain.accounts,
    rows: chain.rows,
    broken: broken && { row_id: broken.rowId, account_id: broken.accountId, where: broken.where, expected: broken.expected, found: broken.found },
    keyed: keyed ? { from_row: keyed.fromId, key_id: keyed.keyId, unverified_rows: keyed.unverifiedRows, problem: keyed.problem } : null,
    differences: figures.differences.map((d) => ({ table: d.table, id: d.id, account_id: d.accountId, field: d.field, stored: d.stored, recomputed: d.recomputed })),
    differences_truncated: figures.truncated,
  };
}

function verifyText(chain: LedgerVerifyResult, figures: LedgerRecomputeResult): string {
  const { broken, keyed, rows, accounts } = chain;
  const { differences, truncated } = figures;
  const lines: string[] = [];
  if (broken) {
    const what =
      broken.where === "row"
        ? `row ${broken.rowId} (account ${broken.accountId})`
        : `the head of account ${broken.accountId} (its last row: ${broken.rowId ?? "none"}; rows deleted from the end?)`;
    lines.push(`ledger chain broken at ${what}: expected hash ${broken.expected}, found ${broken.found ?? "none"} (${rows} rows checked)`);
  }
  if (keyed?.problem === "no_secret" || keyed?.problem === "other_secret") {
    const why = keyed.problem === "no_secret" ? "GATEWAY_LEDGER_SECRET is not set" : "GATEWAY_LEDGER_SECRET is not its secret";
    lines.push(`ledger chain keyed from row ${keyed.fromId} (key id ${keyed.keyId}): ${keyed.unverifiedRows} rows not verified, ${why}`);
  } else if (keyed?.problem === "epoch_altered") {
    lines.push(`ledger chain keyed from row ${keyed.fromId} (key id ${keyed.keyId}): its record in ledger_chain_keys was altered`);
  }
  for (const d of differences) lines.push(`${differenceSubject(d)}: ${d.field} is ${d.stored}, the ledger says ${d.recomputed}`);
  if (differences.length > 0) lines.push(`${differences.length}${truncated ? "+" : ""} stored figures differ from the ledger${truncated ? " (the first listed)" : ""}`);
  if (lines.length === 0) {
    const how = keyed ? `, keyed from row ${keyed.fromId}` : "";
    return `ledger intact: ${accounts} accounts, ${rows} rows checked${how}; balances, spend and usage match it`;
  }
  if (!broken && !keyed?.problem) lines.unshift(`ledger chain intact: ${accounts} accounts, ${rows} rows checked`);
  return lines.join("\n");
}

function differenceSubject(d: LedgerDifference): string {
  switch (d.table) {
    case "accounts":
      return `account ${d.id}`;
    case "keys":
      return `key ${d.id} (account ${d.accountId})`;
    default:
      return `${d.table} ${d.table === "usage_hourly" ? `${d.accountId} ` : ""}${d.id}`;
  }
}
