// /admin/v1/catalog: the live catalog (docs/operations.md, "The live catalog"): read it, write a new
// version (checked like the config file, every error at once), list and read versions, diff two,
// roll back to one, and manage the providers' shared keys (stored encrypted, shown by their last
// four characters only). With catalog.source: file every write is 409 catalog_read_only.
import { z } from "zod";
import { catalogDiffView, catalogProviderKeyView as providerKeyView, catalogVersionView as versionView, catalogView, currentCatalogView } from "../catalog-views.js";
import { adminActor } from "../auth.js";
import { providerKeyTestView, testCatalogProviderKey } from "../provider-key-tests.js";
import { parseWith } from "../validate.js";
import { id, type AdminRoute } from "./route.js";

const versionNumber = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** Every request schema of this file (OpenAPI is generated from these). */
export const catalogSchemas = {
  /** The document is checked by the config file's schema (src/config/catalog-document.ts), all errors at once. */
  writeBody: z.object({ document: z.record(z.string(), z.unknown()), base_version: versionNumber }).strict(),
  rollbackBody: z.object({ version: versionNumber }).strict(),
  versionParams: z.object({ version: versionNumber }),
  versionsQuery: z.object({ limit: z.coerce.number().int().min(1).max(500).default(50), before: versionNumber.optional() }),
  diffQuery: z.object({ from: versionNumber, to: versionNumber.optional() }),
  keyBody: z.object({ provider: z.string().min(1).max(100), key: z.string().trim().min(8).max(4096), label: z.string().trim().max(100).optional() }).strict(),
  keyParams: z.object({ keyId: id }),
  keyStatusBody: z.object({ status: z.enum(["active", "disabled"]) }).strict(),
};

export const catalogRoutes: AdminRoute[] = [
  {
    method: "GET",
    url: "/catalog",
    scope: "catalog:read",
    async handler(_request, _reply, ctx) {
      return currentCatalogView(ctx.catalog);
    },
  },
  {
    method: "POST",
    url: "/catalog/versions",
    scope: "catalog:write",
    async handler(request, reply, ctx) {
      const body = parseWith(catalogSchemas.writeBody, request.body);
      const version = await ctx.catalog.replace(adminActor(request), body.document, body.base_version);
      reply.code(201);
      return versionView(version);
    },
  },
  {
    method: "GET",
    url: "/catalog/versions",
    scope: "catalog:read",
    async handler(request, _reply, ctx) {
      const query = parseWith(catalogSchemas.versionsQuery, request.query, "query");
      const versions = await ctx.catalog.versions(query.limit, query.before);
      return { object: "list", data: versions.map(versionView), has_more: versions.length === query.limit };
    },
  },
  {
    method: "GET",
    url: "/catalog/versions/:version",
    scope: "catalog:read",
    async handler(request, _reply, ctx) {
      const { version } = parseWith(catalogSchemas.versionParams, request.params, "version");
      const found = await ctx.catalog.version(version);
      return catalogView(ctx.catalog.source, found.version, found.document);
    },
  },
  {
    method: "GET",
    url: "/catalog/diff",
    scope: "catalog:read",
    async handler(request, _reply, ctx) {
      const query = parseWith(catalogSchemas.diffQuery, request.query, "query");
      return catalogDiffView(ctx.catalog, query.from, query.to);
    },
  },
  {
    method: "POST",
    url: "/catalog/rollback",
    scope: "catalog:write",
    async handler(request, reply, ctx) {
      const body = parseWith(catalogSchemas.rollbackBody, request.body);
      const version = await ctx.catalog.rollback(adminActor(request), body.version);
      reply.code(201);
      return versionView(version);
    },
  },
  {
    method: "POST",
    url: "/catalog/provider-keys",
    scope: "catalog:write",
    async handler(request, reply, ctx) {
      const body = parseWith(catalogSchemas.keyBody, request.body);
      const info = await ctx.catalog.addProviderKey(adminActor(request), { provider: body.provider, key: body.key, label: body.label ?? "" });
      reply.code(201);
      return { provider_key: providerKeyView(info) };
    },
  },
  {
    method: "PATCH",
    url: "/catalog/provider-keys/:keyId",
    scope: "catalog:write",
    async handler(request, _reply, ctx) {
      const { keyId } = parseWith(catalogSchemas.keyParams, request.params, "keyId");
      const body = parseWith(catalogSchemas.keyStatusBody, request.body);
      return { provider_key: providerKeyView(await ctx.catalog.setProviderKeyStatus(adminActor(request), keyId, body.status)) };
    },
  },
  {
    method: "POST",
    url: "/catalog/provider-keys/:keyId/test",
    scope: "catalog:write",
    async handler(request, _reply, ctx) {
      const { keyId } = parseWith(catalogSchemas.keyParams, request.params, "keyId");
      const config = request.snapshot.config;
      return providerKeyTestView(await testCatalogProviderKey({ store: ctx.store, catalog: ctx.catalog, config }, adminActor(request), keyId));
    },
  },
  {
    method: "DELETE",
    url: "/catalog/provider-keys/:keyId",
    scope: "catalog:write",
    async handler(request, _reply, ctx) {
      const { keyId } = parseWith(catalogSchemas.keyParams, request.params, "keyId");
      const info = await ctx.catalog.removeProviderKey(adminActor(request), keyId);
      return { provider_key: providerKeyView(info), deleted: true };
    },
  },
];
