// The /dashboard/api operations of the live catalog (administrators), the Catalog page's routes;
// request schemas are the admin API's (src/admin/routes/catalog.ts).
import { z } from "zod";
import { catalogSchemas } from "../admin/routes/catalog.js";
import { created, dash, ok, type OperationSpec } from "./operation-spec.js";
import { DASHBOARD_CATALOG_PRICE_OPERATIONS } from "./operations-catalog-prices.js";
import * as r from "./response-schemas.js";

export const DASHBOARD_CATALOG_OPERATIONS: readonly OperationSpec[] = [
  dash({
    method: "GET",
    path: "/admin/catalog",
    summary: "The live catalog: its source, version, document and provider keys (administrators)",
    responses: ok(r.liveCatalogSchema),
  }),
  dash({
    method: "GET",
    path: "/admin/catalog/versions",
    summary: "The catalog's versions, newest first (administrators)",
    query: catalogSchemas.versionsQuery,
    responses: ok(z.object({ object: z.literal("list"), data: z.array(r.catalogVersionSchema), has_more: z.boolean() })),
  }),
  dash({
    method: "GET",
    path: "/admin/catalog/versions/:version",
    summary: "One catalog version (administrators)",
    params: catalogSchemas.versionParams,
    responses: ok(r.liveCatalogSchema),
  }),
  dash({
    method: "GET",
    path: "/admin/catalog/diff",
    summary: "What changed between two catalog versions (administrators)",
    query: catalogSchemas.diffQuery,
    responses: ok(r.catalogDiffSchema),
  }),
  dash({
    method: "POST",
    path: "/admin/catalog/rollback",
    summary: "Roll the catalog back to a version, itself a new version (administrators; 409 when read-only)",
    body: catalogSchemas.rollbackBody,
    responses: created(r.catalogVersionSchema),
  }),
  ...DASHBOARD_CATALOG_PRICE_OPERATIONS,
  dash({
    method: "POST",
    path: "/admin/catalog/provider-keys",
    summary: "Add a shared key to a catalog provider, shown by its last four characters (administrators)",
    body: catalogSchemas.keyBody,
    responses: created(z.object({ provider_key: r.catalogProviderKeySchema })),
  }),
  dash({
    method: "PATCH",
    path: "/admin/catalog/provider-keys/:keyId",
    summary: "Enable or disable a catalog provider's key, pk_ (database) or fk_ (config file) (administrators)",
    params: catalogSchemas.keyParams,
    body: catalogSchemas.keyStatusBody,
    responses: ok(z.object({ provider_key: r.catalogProviderKeySchema })),
  }),
  dash({
    method: "POST",
    path: "/admin/catalog/provider-keys/:keyId/test",
    summary:
      "Test a provider key: the smallest request its type allows, with its status, latency and cost (charged to the operator, not a customer; a key refused with 401/403 is disabled) (administrators)",
    params: catalogSchemas.keyParams,
    responses: ok(r.providerKeyTestSchema),
  }),
  dash({
    method: "DELETE",
    path: "/admin/catalog/provider-keys/:keyId",
    summary: "Remove a catalog provider's key (administrators)",
    params: catalogSchemas.keyParams,
    responses: ok(z.object({ provider_key: r.catalogProviderKeySchema, deleted: z.literal(true) })),
  }),
];
