// The Catalog page's per-entity forms (docs/dashboard.md, "Catalog"): the admin API's
// /admin/v1/catalog/{providers,models,tiers,routing-groups} routes (src/admin/routes/catalog-entities.ts)
// under /dashboard/api/admin, for administrators, audited as the signed-in administrator.
import type { FastifyInstance } from "fastify";
import { CATALOG_ENTITY_ROUTES, catalogEntryOptions } from "../../admin/routes/catalog-entities.js";
import type { RouteContext } from "../../http/route-context.js";
import { dashboardActor, requireAdmin } from "./admin-routes.js";

export function registerCatalogEntityRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get("/admin/catalog/entry-options", async (request) => {
    requireAdmin(request);
    return catalogEntryOptions();
  });
  for (const route of CATALOG_ENTITY_ROUTES) {
    app.route({
      method: route.method,
      url: `/admin${route.url}`,
      async handler(request, reply) {
        requireAdmin(request);
        const answer = await route.run(request, dashboardActor(request), ctx.catalog);
        reply.code(route.status);
        return answer;
      },
    });
  }
}
