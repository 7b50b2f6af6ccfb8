import type { Store } from "../../store/index.js";
import { emit, parseCommand, requireOption, UsageError, type CliIo } from "../io.js";

export async function ledgerCommand(sub: string | undefined, args: string[], io: CliIo, store: Store): Promise<void> {
  if (sub !== "prune") throw new UsageError("usage: gateway admin ledger prune --older-than-days N");
  const { values, json } = parseCommand(args, { "older-than-days": { type: "string" } }, []);
  const text = requireOption(values, "older-than-days");
  if (!/^\d{1,6}$/.test(text)) throw new UsageError(`--older-than-days: "${text}" is not a whole number of days`);
  const deleted = await store.ledger.prune(Number(text));
  return emit(io, json, { deleted }, () => `deleted ${deleted} ledger rows older than ${text} days`);
}
