// `gateway admin alerts list|add|remove|test|deliveries`: alert subscriptions (ADR 0040; docs/operations.md,
// "Alerts"). Validation, the endpoint check and the audited change are the admin API's; a running
// gateway's dispatcher picks up a new subscription and a queued test event from the store.
import { adminCreateBody, alertSchemas, createSubscription, deleteSubscription, deliveryView, subscriptionOr404, subscriptionView } from "../../admin/alert-subscriptions.js";
import { parseWith } from "../../admin/validate.js";
import type { GatewayConfig } from "../../config/load.js";
import type { Store } from "../../store/index.js";
import { emit, parseCommand, table, UsageError, type CliIo } from "../io.js";
import { cliActor } from "./cli-actor.js";

const USAGE =
  "usage: gateway admin alerts list [--workspace ID] | add URL --events TYPE,... [--format json|slack] [--workspace ID] [--description TEXT] | remove ID | test ID | deliveries ID [--limit N]";

export async function alertsCommand(sub: string | undefined, args: string[], io: CliIo, store: Store, config: GatewayConfig): Promise<void> {
  switch (sub) {
    case "list": {
      const { values, json } = parseCommand(args, { workspace: { type: "string" } }, []);
      const q = parseWith(alertSchemas.listQuery, { ...(values.workspace !== undefined && { workspace_id: values.workspace }) }, "query");
      const list = (await store.alerts.list(q.workspace_id)).map(subscriptionView);
      return emit(io, json, list, () =>
        table(list.map((s) => ({ id: s.id, workspace: s.workspace_id ?? "*", url: s.url, format: s.format, events: s.events.join(","), enabled: s.enabled ? "yes" : "no" }))),
      );
    }
    case "add": {
      const { values, positionals, json } = parseCommand(
        args,
        { events: { type: "string" }, format: { type: "string" }, workspace: { type: "string" }, description: { type: "string" } },
        ["URL"],
      );
      const events = typeof values.events === "string" ? values.events.split(",").map((e) => e.trim()) : undefined;
      const body = parseWith(adminCreateBody, {
        url: positionals[0],
        events,
        ...(values.format !== undefined && { format: values.format }),
        ...(values.workspace !== undefined && { workspace_id: values.workspace }),
        ...(values.description !== undefined && { description: values.description }),
      });
      const created = await createSubscription(store, cliActor(), config.alerts.allowedHttpHosts, body, body.workspace_id ?? null);
      return emit(io, json, created, () => `subscription ${created.subscription.id} to ${created.subscription.url}\nsigning secret (shown once): ${created.secret}`);
    }
    case "remove": {
      const { positionals, json } = parseCommand(args, {}, ["ID"]);
      const { id } = parseWith(alertSchemas.params, { id: positionals[0] }, "id");
      await deleteSubscription(store, cliActor(), await subscriptionOr404(store, id));
      return emit(io, json, { id, deleted: true }, () => `subscription ${id} removed`);
    }
    case "test": {
      const { positionals, json } = parseCommand(args, {}, ["ID"]);
      const { id } = parseWith(alertSchemas.params, { id: positionals[0] }, "id");
      await subscriptionOr404(store, id);
      const eventId = await store.alerts.sendTest(id);
      return emit(io, json, { event_id: eventId }, () => `test event ${eventId} queued for ${id} (a running gateway delivers it)`);
    }
    case "deliveries": {
      const { values, positionals, json } = parseCommand(args, { limit: { type: "string" } }, ["ID"]);
      const { id } = parseWith(alertSchemas.params, { id: positionals[0] }, "id");
      const q = parseWith(alertSchemas.deliveriesQuery, { ...(values.limit !== undefined && { limit: values.limit }) }, "query");
      await subscriptionOr404(store, id);
      const list = (await store.alerts.deliveries(id, q.limit)).map(deliveryView);
      return emit(io, json, list, () =>
        table(
          list.map((d) => ({
            event: d.event_type,
            status: d.status,
            attempts: d.attempts,
            last: d.last_error ?? (d.last_status === null ? null : `HTTP ${d.last_status}`),
            next_attempt: d.next_attempt_at,
            created: d.created_at,
          })),
        ),
      );
    }
    default:
      throw new UsageError(USAGE);
  }
}
