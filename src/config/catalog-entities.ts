// Per-entity edits of the catalog document (docs/decisions/0033-live-catalog.md: "per-entity routes
// and console pages are thin edits of the document"). Each function takes a document and returns
// the edited document, still unchecked, with the entry before and after; live-catalog.ts checks the
// result with the file's schema and catalogue build (every error at once) and appends it as one
// new version. The admin API, the CLI and the console all come through here.
//
// Entities: providers (by name), models (by id), tiers (by name) and routing groups: a routing
// group is a chat model's `deployments` and `routing` (src/config/routing-groups.ts), named by the
// model's id, so it is listed and edited here apart from the model's other fields. MCP servers are
// the document's `mcp_servers` by name (their values are taken out before: mcp-catalog.ts).
import { GatewayError } from "../errors/catalogue.js";
import type { CatalogDocument } from "./catalog-document.js";

export const ENTITY_KINDS = ["provider", "model", "tier", "routing_group", "mcp_server"] as const;
export type EntityKind = (typeof ENTITY_KINDS)[number];
/** The kinds that can be disabled (kept in the document, not served). */
export type DisableableKind = Extract<EntityKind, "provider" | "model" | "mcp_server">;

export type EntityChange =
  | { op: "create"; kind: EntityKind; name: string; entry: Record<string, unknown> }
  /** Fields given replace the entry's; a field set to null is removed. */
  | { op: "update"; kind: EntityKind; name: string; set: Record<string, unknown> }
  | { op: "disable" | "enable"; kind: DisableableKind; name: string }
  | { op: "delete"; kind: EntityKind; name: string };

export interface EntityEdit {
  /** The edited document, not yet checked. */
  document: CatalogDocument;
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}

type Entry = Record<string, unknown>;
const GROUP_FIELDS = ["deployments", "routing"] as const;

/** Every entry of a kind, in document order. */
export function entriesOf(document: CatalogDocument, kind: EntityKind): Array<{ name: string; entry: Entry }> {
  if (kind === "provider") return Object.entries(document.providers).map(([name, entry]) => ({ name, entry: entry }));
  if (kind === "tier") return Object.entries(document.tiers).map(([name, entry]) => ({ name, entry: entry }));
  if (kind === "mcp_server") return Object.entries(document.mcp_servers ?? {}).map(([name, entry]) => ({ name, entry: entry }));
  if (kind === "model") return document.models.map((m) => ({ name: m.id, entry: m }));
  return document.models.filter((m) => m.deployments !== undefined).map((m) => ({ name: m.id, entry: groupOf(m as Entry) }));
}

/** One entry, or 404 naming it. */
export function entryOf(document: CatalogDocument, kind: EntityKind, name: string): Entry {
  const found = entriesOf(document, kind).find((e) => e.name === name);
  if (!found) throw notFound(kind, name);
  return found.entry;
}

/** Applies one change: 404 for an entry that is not there, 409 for one that already is or is still named elsewhere. */
export function applyEntityChange(document: CatalogDocument, change: EntityChange): EntityEdit {
  const { kind, name } = change;
  const exists = entriesOf(document, kind).some((e) => e.name === name);
  if (change.op === "create") {
    if (exists) throw new GatewayError("conflict", `The catalog already has a ${label(kind)} ${name}.`, { code: "catalog_entry_exists", param: "name" });
    if (kind === "routing_group") return setGroup(document, name, change.entry, null);
    const entry = kind === "model" ? { ...change.entry, id: name } : change.entry;
    return { document: put(document, kind, name, entry), before: null, after: entry };
  }
  if (!exists) throw notFound(kind, name);
  const before = entryOf(document, kind, name);
  if (change.op === "delete") {
    if (kind === "routing_group") return deleteGroup(document, name);
    const users = usersOf(document, kind, name);
    if (users.length > 0)
      throw new GatewayError("conflict", `The ${label(kind)} ${name} is still named by ${users.map((u) => u.field).join(", ")}; change those first.`, {
        code: "catalog_entry_in_use",
        errors: users,
      });
    return { document: remove(document, kind, name), before, after: null };
  }
  const after = change.op === "update" ? merged(before, change.set, kind === "model" ? { id: name } : {}) : withDisabled(before, change.op === "disable");
  if (kind === "routing_group") return setGroup(document, name, after, before);
  return { document: put(document, kind, name, after), before, after };
}

/** Where the document still names an entry (the fields to change before deleting it). */
export function usersOf(document: CatalogDocument, kind: EntityKind, name: string): Array<{ field: string; message: string }> {
  const users: Array<{ field: string; message: string }> = [];
  if (kind === "provider") {
    document.models.forEach((m, i) => {
      if (m.provider === name) users.push({ field: `models[${i}].provider`, message: `model ${m.id} uses provider ${name}` });
      m.deployments?.forEach((d, j) => {
        if (d.provider === name) users.push({ field: `models[${i}].deployments[${j}].provider`, message: `model ${m.id} routes to provider ${name}` });
      });
    });
  }
  if (kind === "model") {
    for (const [tier, entry] of Object.entries(document.tiers)) {
      if (entry.models.includes(name)) users.push({ field: `tiers.${tier}.models`, message: `tier ${tier} includes model ${name}` });
      if (entry.limits?.models?.[name] !== undefined) users.push({ field: `tiers.${tier}.limits.models`, message: `tier ${tier} limits model ${name}` });
    }
  }
  return users;
}

function groupOf(model: Entry): Entry {
  return Object.fromEntries(GROUP_FIELDS.filter((f) => model[f] !== undefined).map((f) => [f, model[f]]));
}

/** Sets a model's deployments and routing; the single-provider fields go (a model has one form or the other). */
function setGroup(document: CatalogDocument, id: string, group: Entry, before: Entry | null): EntityEdit {
  const index = document.models.findIndex((m) => m.id === id);
  if (index < 0) throw notFound("model", id);
  const model: Entry = { ...(document.models[index] as Entry) };
  delete model.provider;
  for (const field of GROUP_FIELDS) delete model[field];
  const unknown = Object.keys(group).filter((f) => !(GROUP_FIELDS as readonly string[]).includes(f));
  if (unknown.length > 0) throw new GatewayError("invalid_request", `A routing group has only deployments and routing (not ${unknown.join(", ")}).`, { param: unknown[0]! });
  const after = groupOf(group);
  return { document: replaceModel(document, index, { ...model, ...after }), before, after };
}

/** Back to the single-provider form, served by the first deployment's provider and upstream model. */
function deleteGroup(document: CatalogDocument, id: string): EntityEdit {
  const index = document.models.findIndex((m) => m.id === id);
  const model = document.models[index]!;
  const first = model.deployments![0]!;
  const single: Entry = { ...(model as Entry), provider: first.provider };
  if (model.upstream_model === undefined && first.upstream_model !== undefined) single.upstream_model = first.upstream_model;
  for (const field of GROUP_FIELDS) delete single[field];
  return { document: replaceModel(document, index, single), before: groupOf(model), after: null };
}

function merged(before: Entry, set: Record<string, unknown>, fixed: Entry): Entry {
  const after: Entry = { ...before };
  for (const [field, value] of Object.entries(set)) {
    if (value === null) delete after[field];
    else after[field] = value;
  }
  return { ...after, ...fixed };
}

/** `disabled: true`, or the field removed (enabled is the default, so the document says nothing). */
function withDisabled(entry: Entry, disabled: boolean): Entry {
  const after: Entry = { ...entry };
  if (disabled) after.disabled = true;
  else delete after.disabled;
  return after;
}

function put(document: CatalogDocument, kind: EntityKind, name: string, entry: Entry): CatalogDocument {
  if (kind === "provider") return { ...document, providers: { ...document.providers, [name]: entry as CatalogDocument["providers"][string] } };
  if (kind === "tier") return { ...document, tiers: { ...document.tiers, [name]: entry as CatalogDocument["tiers"][string] } };
  if (kind === "mcp_server") return { ...document, mcp_servers: { ...document.mcp_servers, [name]: entry } };
  const index = document.models.findIndex((m) => m.id === name);
  if (index < 0) return { ...document, models: [...document.models, entry as CatalogDocument["models"][number]] };
  return replaceModel(document, index, entry);
}

function replaceModel(document: CatalogDocument, index: number, entry: Entry): CatalogDocument {
  const models = [...document.models];
  models[index] = entry as CatalogDocument["models"][number];
  return { ...document, models };
}

function remove(document: CatalogDocument, kind: EntityKind, name: string): CatalogDocument {
  if (kind === "provider") return { ...document, providers: Object.fromEntries(Object.entries(document.providers).filter(([n]) => n !== name)) };
  if (kind === "tier") return { ...document, tiers: Object.fromEntries(Object.entries(document.tiers).filter(([n]) => n !== name)) };
  if (kind === "mcp_server") return { ...document, mcp_servers: Object.fromEntries(Object.entries(document.mcp_servers ?? {}).filter(([n]) => n !== name)) };
  return { ...document, models: document.models.filter((m) => m.id !== name) };
}

function label(kind: EntityKind): string {
  return kind === "routing_group" ? "routing group" : kind === "mcp_server" ? "MCP server" : kind;
}

function notFound(kind: EntityKind, name: string): GatewayError {
  return new GatewayError("not_found", `The catalog has no ${label(kind)} ${name}.`, { param: "name", code: "catalog_entry_not_found" });
}
