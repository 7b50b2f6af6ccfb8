// The Models page's price import (docs/dashboard.md, "Models"): the admin API's
// POST /admin/v1/catalog/price-import (src/admin/routes/catalog-prices.ts) with the same schema and
// view, audited as the signed-in administrator. dry_run: true is the preview; 409 catalog_read_only
// with catalog.source: file.
import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../../http/route-context.js";
import { priceImportBody, priceImportView } from "../../admin/routes/catalog-prices.js";
import { parseWith } from "../../admin/validate.js";
import { dashboardActor, requireAdmin } from "./admin-routes.js";

export function registerCatalogPriceRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.post("/admin/catalog/price-import", { config: { fileTextFields: ["content"] } }, async (request, reply) => {
    requireAdmin(request);
    const body = parseWith(priceImportBody, request.body);
    const result = await ctx.catalog.importPrices(dashboardActor(request), { format: body.format, content: body.content, baseVersion: body.base_version, apply: !body.dry_run });
    if (!body.dry_run) reply.code(201);
    return priceImportView(body.base_version, body.dry_run, result);
  });
}
