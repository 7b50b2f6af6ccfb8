// `gateway admin stripe events|confirm|dismiss`: the Stripe events the gateway acted on, and the
// operator's answer to a pending one (docs/billing.md, "Card top-ups"); the admin API's operations.
import { stripeEventSchemas, stripeEventView } from "../../admin/routes/stripe-events.js";
import { parseWith } from "../../admin/validate.js";
import type { Store } from "../../store/index.js";
import { emit, parseCommand, table, UsageError, type CliIo } from "../io.js";
import { cliActor } from "./cli-actor.js";

const USAGE = "usage: gateway admin stripe events [--status pending|credited|debited|confirmed|dismissed|ignored] | confirm EVENT_ID | dismiss EVENT_ID";

export async function stripeCommand(sub: string | undefined, args: string[], io: CliIo, store: Store): Promise<void> {
  switch (sub) {
    case "events": {
      const { values, json } = parseCommand(args, { status: { type: "string" } }, []);
      const q = parseWith(stripeEventSchemas.listQuery, { limit: 500, ...(values.status !== undefined && { status: values.status }) }, "query");
      const events = (await store.stripeEvents.list({ limit: q.limit, ...(q.status !== undefined && { status: q.status }) })).map(stripeEventView);
      return emit(io, json, events, () =>
        table(events.map((e) => ({ id: e.id, type: e.type, account_id: e.account_id, status: e.status, amount_usd: e.amount_usd, applied_usd: e.applied_usd, reason: e.reason }))),
      );
    }
    case "confirm":
    case "dismiss": {
      const { positionals, json } = parseCommand(args, {}, ["EVENT_ID"]);
      const { id } = parseWith(stripeEventSchemas.params, { id: positionals[0] }, "id");
      const event = stripeEventView(await store.stripeEvents.resolve(id, sub, cliActor()));
      return emit(io, json, event, () => `Stripe event ${event.id} is ${event.status}; ${event.applied_usd} USD reached the ledger`);
    }
    default:
      throw new UsageError(USAGE);
  }
}
