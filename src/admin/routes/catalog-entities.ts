// /admin/v1/catalog/{providers,models,tiers,routing-groups,mcp-servers}: the live catalog one entry at a time
// (docs/operations.md, "The live catalog"). Each write is a thin edit of the catalog document
// (src/config/catalog-entities.ts) made from `base_version`: checked like a whole document (400 with
// every error and its field path), one new version (409 when the base is stale), audited with the
// entry before and after. The dashboard registers the same routes under /dashboard/api/admin
// (src/dashboard/routes/catalog-entity-routes.ts), so the spec below is shared by both.
import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { DIMENSIONS } from "../../core/dimensions.js";
import { ENTITY_KINDS, entriesOf, entryOf, type EntityChange, type EntityKind } from "../../config/catalog-entities.js";
import { modelSchema } from "../../config/schema.js";
import { UPSTREAM_TYPES } from "../../upstreams/capabilities.js";
import type { LiveCatalog } from "../../config/live-catalog.js";
import type { AuditActor } from "../../store/audit-store.js";
import { adminActor } from "../auth.js";
import { catalogVersionView } from "../catalog-views.js";
import type { AdminScope } from "../scopes.js";
import { parseWith } from "../validate.js";
import type { AdminRoute } from "./route.js";

const baseVersion = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);
/** Provider, tier and model names as the document's schema allows them, bounded; the document check says the rest. */
const entryName = z.string().min(1).max(200);
const entry = z.record(z.string().max(100), z.unknown());

export const catalogEntitySchemas = {
  nameParams: z.object({ name: entryName }),
  createBody: z.object({ name: entryName, entry, base_version: baseVersion }).strict(),
  /** Fields given replace the entry's; a field set to null is removed. */
  updateBody: z.object({ set: entry, base_version: baseVersion }).strict(),
  stateBody: z.object({ base_version: baseVersion }).strict(),
  deleteQuery: z.object({ base_version: baseVersion }),
};

/** The URL segment of each kind. */
export const ENTITY_SEGMENTS: Record<EntityKind, string> = { provider: "providers", model: "models", tier: "tiers", routing_group: "routing-groups", mcp_server: "mcp-servers" };

/** What a route answers: a list, one entry, or a change (OpenAPI picks the answer's schema by it). */
export type EntityAnswer = "list" | "entry" | "change";

export interface CatalogEntityRoute {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Relative to /admin/v1 (and to /dashboard/api/admin). */
  url: string;
  scope: AdminScope;
  kind: EntityKind;
  summary: string;
  answer: EntityAnswer;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodObject;
  status: 200 | 201;
  run(request: FastifyRequest, actor: AuditActor, catalog: LiveCatalog): Promise<unknown>;
}

const DISABLED_MEANS = {
  model: "unlisted, refused as an unknown model",
  provider: "its deployments are not routed to",
  mcp_server: "stopped, its tools, prompts and resources unlisted",
};

function label(kind: EntityKind): string {
  return kind.replace("_", " ");
}

function routesOf(kind: EntityKind): CatalogEntityRoute[] {
  const collection = `/catalog/${ENTITY_SEGMENTS[kind]}`;
  const one = `${collection}/:name`;
  const nameOf = (request: FastifyRequest) => parseWith(catalogEntitySchemas.nameParams, request.params, "name").name;
  const change = async (catalog: LiveCatalog, actor: AuditActor, edit: EntityChange, base: number) => {
    const done = await catalog.edit(actor, edit, base);
    return { object: "catalog.change", kind, op: edit.op, name: edit.name, version: catalogVersionView(done.version), before: done.before, after: done.after };
  };
  const routes: CatalogEntityRoute[] = [
    {
      method: "GET",
      url: collection,
      scope: "catalog:read",
      kind,
      summary: `The catalog's ${label(kind)}s as the document writes them`,
      answer: "list",
      status: 200,
      async run(_request, _actor, catalog) {
        const { version, document } = await catalog.current();
        const data = entriesOf(document, kind).map((e) => ({ name: e.name, disabled: e.entry.disabled === true, entry: e.entry }));
        return { object: "list", kind, source: catalog.source, read_only: catalog.source === "file", version: version?.version ?? null, data };
      },
    },
    {
      method: "GET",
      url: one,
      scope: "catalog:read",
      kind,
      summary: `One ${label(kind)} of the catalog`,
      answer: "entry",
      params: catalogEntitySchemas.nameParams,
      status: 200,
      async run(request, _actor, catalog) {
        const name = nameOf(request);
        const { version, document } = await catalog.current();
        return { object: "catalog.entry", kind, name, version: version?.version ?? null, entry: entryOf(document, kind, name) };
      },
    },
    {
      method: "POST",
      url: collection,
      scope: "catalog:write",
      kind,
      summary: `Add a ${label(kind)} (a new catalog version; 400 with every error, 409 when base_version is stale or the name is taken)`,
      answer: "change",
      body: catalogEntitySchemas.createBody,
      status: 201,
      async run(request, actor, catalog) {
        const body = parseWith(catalogEntitySchemas.createBody, request.body);
        return change(catalog, actor, { op: "create", kind, name: body.name, entry: body.entry }, body.base_version);
      },
    },
    {
      method: "PATCH",
      url: one,
      scope: "catalog:write",
      kind,
      summary: `Change a ${label(kind)}: the fields given replace its own, null removes one (a new catalog version)`,
      answer: "change",
      params: catalogEntitySchemas.nameParams,
      body: catalogEntitySchemas.updateBody,
      status: 200,
      async run(request, actor, catalog) {
        const body = parseWith(catalogEntitySchemas.updateBody, request.body);
        return change(catalog, actor, { op: "update", kind, name: nameOf(request), set: body.set }, body.base_version);
      },
    },
    {
      method: "DELETE",
      url: one,
      scope: "catalog:write",
      kind,
      summary:
        kind === "routing_group"
          ? "Remove a model's routing group: it keeps its first deployment's provider (a new catalog version)"
          : `Delete a ${label(kind)} (409 catalog_entry_in_use with the fields that still name it)`,
      answer: "change",
      params: catalogEntitySchemas.nameParams,
      query: catalogEntitySchemas.deleteQuery,
      status: 200,
      async run(request, actor, catalog) {
        const query = parseWith(catalogEntitySchemas.deleteQuery, request.query, "query");
        return change(catalog, actor, { op: "delete", kind, name: nameOf(request) }, query.base_version);
      },
    },
  ];
  if (kind === "provider" || kind === "model" || kind === "mcp_server") {
    for (const op of ["disable", "enable"] as const)
      routes.push({
        method: "POST",
        url: `${one}/${op}`,
        scope: "catalog:write",
        kind,
        summary: op === "disable" ? `Disable a ${label(kind)}: kept in the catalog, not served (${DISABLED_MEANS[kind]})` : `Enable a disabled ${label(kind)} again`,
        answer: "change",
        params: catalogEntitySchemas.nameParams,
        body: catalogEntitySchemas.stateBody,
        status: 200,
        async run(request, actor, catalog) {
          const body = parseWith(catalogEntitySchemas.stateBody, request.body);
          return change(catalog, actor, { op, kind, name: nameOf(request) }, body.base_version);
        },
      });
  }
  return routes;
}

export const CATALOG_ENTITY_ROUTES: readonly CatalogEntityRoute[] = ENTITY_KINDS.flatMap(routesOf);

export const catalogEntityRoutes: AdminRoute[] = CATALOG_ENTITY_ROUTES.map((route): AdminRoute => ({
  method: route.method,
  url: route.url,
  scope: route.scope,
  async handler(request, reply, ctx) {
    const answer = await route.run(request, adminActor(request), ctx.catalog);
    reply.code(route.status);
    return answer;
  },
}));

/**
 * What the console's entry forms offer (GET /catalog/entry-options): the registered upstream
 * types, model kinds and modalities, and every price key, from the config schema and the
 * dimension table, so the forms never keep a second list.
 */
export function catalogEntryOptions() {
  return {
    object: "catalog.entry_options" as const,
    upstream_types: [...UPSTREAM_TYPES],
    model_kinds: [...modelSchema.shape.kind.options],
    modalities: [...modelSchema.shape.modalities.unwrap().shape.input.element.options],
    price_keys: DIMENSIONS.flatMap((d) => (d.priceKey === null ? [] : [d.priceKey])),
  };
}

export const catalogEntryOptionsRoute: AdminRoute = {
  method: "GET",
  url: "/catalog/entry-options",
  scope: "catalog:read",
  async handler() {
    return catalogEntryOptions();
  },
};
