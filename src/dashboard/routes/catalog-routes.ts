// The Catalog page's routes (docs/dashboard.md, "Catalog"): the live catalog for administrators, the
// admin API's /admin/v1/catalog reads, rollback and provider keys (src/admin/routes/catalog.ts) with
// the same schemas and views, audited as the signed-in administrator. Writing a whole new document
// stays with the admin API and the CLI. With catalog.source: file every write is 409
// catalog_read_only.
import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../../http/route-context.js";
import { catalogSchemas } from "../../admin/routes/catalog.js";
import { catalogDiffView, catalogProviderKeyView, catalogVersionView, catalogView, currentCatalogView } from "../../admin/catalog-views.js";
import { parseWith } from "../../admin/validate.js";
import { providerKeyTestView, testCatalogProviderKey } from "../../admin/provider-key-tests.js";
import { dashboardActor, requireAdmin } from "./admin-routes.js";

export function registerCatalogRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/admin/catalog", async (request) => {
    requireAdmin(request);
    return currentCatalogView(ctx.catalog);
  });

  app.get("/admin/catalog/versions", async (request) => {
    requireAdmin(request);
    const query = parseWith(catalogSchemas.versionsQuery, request.query, "query");
    const versions = await ctx.catalog.versions(query.limit, query.before);
    return { object: "list", data: versions.map(catalogVersionView), has_more: versions.length === query.limit };
  });

  app.get("/admin/catalog/versions/:version", async (request) => {
    requireAdmin(request);
    const { version } = parseWith(catalogSchemas.versionParams, request.params, "version");
    const found = await ctx.catalog.version(version);
    return catalogView(ctx.catalog.source, found.version, found.document);
  });

  app.get("/admin/catalog/diff", async (request) => {
    requireAdmin(request);
    const query = parseWith(catalogSchemas.diffQuery, request.query, "query");
    return catalogDiffView(ctx.catalog, query.from, query.to);
  });

  app.post("/admin/catalog/rollback", async (request, reply) => {
    requireAdmin(request);
    const body = parseWith(catalogSchemas.rollbackBody, request.body);
    const version = await ctx.catalog.rollback(dashboardActor(request), body.version);
    reply.code(201);
    return catalogVersionView(version);
  });

  app.post("/admin/catalog/provider-keys", async (request, reply) => {
    requireAdmin(request);
    const body = parseWith(catalogSchemas.keyBody, request.body);
    const info = await ctx.catalog.addProviderKey(dashboardActor(request), { provider: body.provider, key: body.key, label: body.label ?? "" });
    reply.code(201);
    return { provider_key: catalogProviderKeyView(info) };
  });

  app.patch("/admin/catalog/provider-keys/:keyId", async (request) => {
    requireAdmin(request);
    const { keyId } = parseWith(catalogSchemas.keyParams, request.params, "keyId");
    const body = parseWith(catalogSchemas.keyStatusBody, request.body);
    return { provider_key: catalogProviderKeyView(await ctx.catalog.setProviderKeyStatus(dashboardActor(request), keyId, body.status)) };
  });

  app.post("/admin/catalog/provider-keys/:keyId/test", async (request) => {
    requireAdmin(request);
    const { keyId } = parseWith(catalogSchemas.keyParams, request.params, "keyId");
    const config = request.snapshot.config;
    return providerKeyTestView(await testCatalogProviderKey({ store: ctx.store, catalog: ctx.catalog, config }, dashboardActor(request), keyId));
  });

  app.delete("/admin/catalog/provider-keys/:keyId", async (request) => {
    requireAdmin(request);
    const { keyId } = parseWith(catalogSchemas.keyParams, request.params, "keyId");
    const info = await ctx.catalog.removeProviderKey(dashboardActor(request), keyId);
    return { provider_key: catalogProviderKeyView(info), deleted: true };
  });
}
