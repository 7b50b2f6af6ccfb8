// `gateway admin codes mint|list|revoke`: redemption codes (docs/billing.md, "Redemption codes").
// Minting prints the codes once; only their hashes are stored. Validation is the admin API's.
import { codeSchemas, mintFromBody } from "../../admin/routes/codes.js";
import { revokeCode } from "../../admin/operations.js";
import { codeView } from "../../admin/views.js";
import { parseWith } from "../../admin/validate.js";
import type { Store } from "../../store/index.js";
import { emit, parseCommand, requireOption, table, UsageError, type CliIo } from "../io.js";
import { cliActor } from "./cli-actor.js";

const USAGE = "usage: gateway admin codes mint --value USD [--count N] [--expires-in-days N] [--batch B] [--note TEXT] | list [--batch B] [--state S] | revoke ID";

function integer(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,6}$/.test(text)) throw new UsageError(`--${name}: a whole number`);
  return Number(text);
}

export async function codesCommand(sub: string | undefined, args: string[], io: CliIo, store: Store): Promise<void> {
  switch (sub) {
    case "mint": {
      const { values, json } = parseCommand(
        args,
        { value: { type: "string" }, count: { type: "string" }, "expires-in-days": { type: "string" }, batch: { type: "string" }, note: { type: "string" } },
        [],
      );
      const count = integer(values.count as string | undefined, "count");
      const days = integer(values["expires-in-days"] as string | undefined, "expires-in-days");
      const body = parseWith(codeSchemas.mintBody, {
        value_usd: requireOption(values, "value"),
        ...(count !== undefined && { count }),
        ...(days !== undefined && { expires_in_days: days }),
        ...(values.batch !== undefined && { batch: values.batch }),
        ...(values.note !== undefined && { note: values.note }),
      });
      const minted = await mintFromBody(store, cliActor(), body);
      return emit(io, json, minted.data, () =>
        [...minted.data.map((c) => `${c.code}  ${c.value_usd} USD  expires ${c.expires_at}  ${c.id}`), "This is the only time the codes are shown; store them now."].join("\n"),
      );
    }
    case "list": {
      const { values, json } = parseCommand(args, { batch: { type: "string" }, state: { type: "string" } }, []);
      const q = parseWith(
        codeSchemas.listQuery,
        { limit: 500, ...(values.batch !== undefined && { batch: values.batch }), ...(values.state !== undefined && { state: values.state }) },
        "query",
      );
      const codes = (await store.codes.list({ limit: q.limit, ...(q.batch !== undefined && { batch: q.batch }), ...(q.state !== undefined && { state: q.state }) })).map((c) =>
        codeView(c),
      );
      return emit(io, json, codes, () =>
        table(codes.map((c) => ({ id: c.id, prefix: c.prefix, value_usd: c.value_usd, batch: c.batch, state: c.state, expires_at: c.expires_at, used_by: c.used_by }))),
      );
    }
    case "revoke": {
      const { positionals, json } = parseCommand(args, {}, ["ID"]);
      const code = await store.audited(cliActor(), (tx) => revokeCode(tx, positionals[0]!));
      return emit(io, json, codeView(code), () => `redemption code ${code.id} is revoked`);
    }
    default:
      throw new UsageError(USAGE);
  }
}
