// `gateway admin catalog providers|models|tiers|routing-groups|mcp-servers ...`: the live catalog one entry at a
// time, through the same edits as the admin API (LiveCatalog.edit, src/config/catalog-entities.ts):
// checked like a whole document, one new version, audited as the CLI actor. The running gateways
// serve it within a second (they watch the catalog's head). Needs catalog.source: database.
import type { GatewayConfig } from "../../config/load.js";
import { entriesOf, entryOf, type EntityChange, type EntityKind } from "../../config/catalog-entities.js";
import { LiveCatalog } from "../../config/live-catalog.js";
import type { Store } from "../../store/index.js";
import { emit, parseCommand, table, UsageError, type CliIo } from "../io.js";
import { cliActor } from "./cli-actor.js";

const KINDS: Record<string, EntityKind> = { providers: "provider", models: "model", tiers: "tier", "routing-groups": "routing_group", "mcp-servers": "mcp_server" };

export const CATALOG_USAGE = "usage: gateway admin catalog providers|models|tiers|routing-groups|mcp-servers list|show|add|set|disable|enable|remove ...";

export async function catalogCommand(args: string[], io: CliIo, store: Store, config: GatewayConfig): Promise<void> {
  const [group, sub, ...rest] = args;
  const kind = group === undefined ? undefined : KINDS[group];
  if (kind === undefined) throw new UsageError(CATALOG_USAGE);
  // The CLI is no gateway: nothing to swap in here; the gateways sharing the database follow the head.
  const catalog = new LiveCatalog(
    store,
    () => config,
    async () => {},
  );
  switch (sub) {
    case "list": {
      const { json } = parseCommand(rest, {}, []);
      const { version, document } = await catalog.current();
      const data = entriesOf(document, kind).map((e) => ({ name: e.name, disabled: e.entry.disabled === true, entry: e.entry }));
      return emit(io, json, { version: version?.version ?? null, source: catalog.source, data }, () =>
        table(data.map((e) => ({ name: e.name, state: e.disabled ? "disabled" : "enabled", ...summaryOf(kind, e.entry) }))),
      );
    }
    case "show": {
      const { positionals, json } = parseCommand(rest, {}, ["NAME"]);
      const { document } = await catalog.current();
      const entry = entryOf(document, kind, positionals[0]!);
      return emit(io, json, entry, () => JSON.stringify(entry, null, 2));
    }
    case "add":
    case "set": {
      const { positionals, values, json } = parseCommand(rest, { base: { type: "string" } }, ["NAME", "JSON"]);
      const fields = await jsonObject(positionals[1]!, io);
      const change: EntityChange = sub === "add" ? { op: "create", kind, name: positionals[0]!, entry: fields } : { op: "update", kind, name: positionals[0]!, set: fields };
      return report(io, json, change, await catalog.edit(cliActor(), change, await baseOf(values.base, store)));
    }
    case "disable":
    case "enable":
    case "remove": {
      if (sub !== "remove" && kind !== "provider" && kind !== "model" && kind !== "mcp_server") throw new UsageError(`only providers, models and MCP servers can be ${sub}d`);
      const { positionals, values, json } = parseCommand(rest, { base: { type: "string" } }, ["NAME"]);
      const name = positionals[0]!;
      const change = (sub === "remove" ? { op: "delete", kind, name } : { op: sub, kind, name }) as EntityChange;
      return report(io, json, change, await catalog.edit(cliActor(), change, await baseOf(values.base, store)));
    }
    default:
      throw new UsageError(CATALOG_USAGE);
  }
}

function report(io: CliIo, json: boolean, change: EntityChange, done: Awaited<ReturnType<LiveCatalog["edit"]>>): void {
  const answer = { op: change.op, kind: change.kind, name: change.name, version: done.version.version, before: done.before, after: done.after };
  emit(io, json, answer, () => `catalog version ${done.version.version}: ${done.version.reason}`);
}

/** --base V, else the latest version (a change written meanwhile still makes this one 409). */
async function baseOf(value: string | boolean | undefined, store: Store): Promise<number> {
  if (typeof value === "string") {
    if (!/^\d{1,15}$/.test(value) || Number(value) < 1) throw new UsageError("--base must be a catalog version number");
    return Number(value);
  }
  const latest = await store.catalog.latest();
  if (latest === null) throw new UsageError("the database holds no catalog yet: start the gateway once (it seeds it from the config file)");
  return latest.version;
}

/** A JSON object from the argument, or from standard input with "-". */
async function jsonObject(text: string, io: CliIo): Promise<Record<string, unknown>> {
  const source = text === "-" ? ((await io.readStdin?.()) ?? "") : text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(source);
  } catch {
    throw new UsageError('JSON: not valid JSON (give an object, e.g. \'{"type":"openai","base_url":"https://api.openai.com/v1"}\')');
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError("JSON: give an object");
  return parsed as Record<string, unknown>;
}

function summaryOf(kind: EntityKind, entry: Record<string, unknown>): Record<string, string> {
  const text = (value: unknown) => (value === undefined ? "-" : typeof value === "string" ? value : JSON.stringify(value));
  if (kind === "provider") return { type: text(entry.type), base_url: text(entry.base_url) };
  if (kind === "model") return { kind: text(entry.kind), provider: text(entry.provider ?? "(routing group)"), upstream_model: text(entry.upstream_model) };
  if (kind === "tier") return { models: (entry.models as string[]).join(", ") };
  if (kind === "mcp_server") return { transport: entry.url === undefined ? `stdio: ${text(entry.command)}` : text(entry.url), price_per_call_usd: text(entry.price_per_call_usd) };
  return { deployments: (entry.deployments as Array<{ name: string; provider: string }>).map((d) => `${d.name}@${d.provider}`).join(", ") };
}
