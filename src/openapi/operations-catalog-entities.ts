// The per-entity catalog operations (providers, models, tiers, routing groups), once under
// /admin/v1 (admin tokens, catalog:read / catalog:write) and once under /dashboard/api/admin
// (administrators' sessions): both come from the one route spec in src/admin/routes/catalog-entities.ts.
import { z } from "zod";
import { CATALOG_ENTITY_ROUTES, type CatalogEntityRoute, type EntityAnswer } from "../admin/routes/catalog-entities.js";
import { ENTITY_KINDS } from "../config/catalog-entities.js";
import { admin, dash, ok, type OperationSpec, type ResponseSpec } from "./operation-spec.js";
import { catalogVersionSchema } from "./response-schemas.js";

const kind = z.enum(ENTITY_KINDS);
/** An entry as the config file writes it (its schema: the file's, docs/configuration.md). */
const entry = z.record(z.string(), z.unknown());

const ANSWERS: Record<EntityAnswer, z.ZodType> = {
  list: z.object({
    object: z.literal("list"),
    kind,
    source: z.enum(["file", "database"]),
    read_only: z.boolean(),
    version: z.number().int().nullable(),
    data: z.array(z.object({ name: z.string(), disabled: z.boolean(), entry })),
  }),
  entry: z.object({ object: z.literal("catalog.entry"), kind, name: z.string(), version: z.number().int().nullable(), entry }),
  change: z.object({
    object: z.literal("catalog.change"),
    kind,
    op: z.enum(["create", "update", "disable", "enable", "delete"]),
    name: z.string(),
    version: catalogVersionSchema,
    before: entry.nullable(),
    after: entry.nullable(),
  }),
};

const entryOptions = z.object({
  object: z.literal("catalog.entry_options"),
  upstream_types: z.array(z.string()),
  model_kinds: z.array(z.string()),
  modalities: z.array(z.string()),
  price_keys: z.array(z.string()),
});
const ENTRY_OPTIONS_SUMMARY = "What the entry forms offer: upstream types, model kinds, modalities and price keys";

function specOf(route: CatalogEntityRoute) {
  const responses: Record<number, ResponseSpec> = { [route.status]: { description: route.status === 201 ? "Created" : "OK", json: ANSWERS[route.answer] } };
  return {
    method: route.method,
    path: route.url,
    summary: route.summary,
    responses,
    ...(route.params && { params: route.params }),
    ...(route.query && { query: route.query }),
    ...(route.body && { body: route.body }),
  };
}

export const ADMIN_CATALOG_ENTITY_OPERATIONS: readonly OperationSpec[] = [
  ...CATALOG_ENTITY_ROUTES.map((route) => admin({ ...specOf(route), scope: route.scope })),
  admin({ method: "GET", path: "/catalog/entry-options", summary: ENTRY_OPTIONS_SUMMARY, scope: "catalog:read", responses: ok(entryOptions) }),
];

export const DASHBOARD_CATALOG_ENTITY_OPERATIONS: readonly OperationSpec[] = [
  ...CATALOG_ENTITY_ROUTES.map((route) => dash({ ...specOf(route), path: `/admin${route.url}`, summary: `${route.summary} (administrators)` })),
  dash({ method: "GET", path: "/admin/catalog/entry-options", summary: `${ENTRY_OPTIONS_SUMMARY} (administrators)`, responses: ok(entryOptions) }),
];
