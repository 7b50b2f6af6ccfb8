// The admin API under /admin/v1 (docs/operations.md, "Admin API"; ADR 0019): admin-token bearer
// auth before the body is read, one scope per route, errors from the catalogue in the OpenAI shape
// with X-Request-ID (the server's hooks), nothing cached by a proxy.
import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../http/route-context.js";
import { authenticateAdmin, requireScope } from "./auth.js";
import { accountRoutes } from "./routes/accounts.js";
import { alertRoutes } from "./routes/alerts.js";
import { catalogRoutes } from "./routes/catalog.js";
import { catalogEntityRoutes, catalogEntryOptionsRoute } from "./routes/catalog-entities.js";
import { catalogPriceRoutes } from "./routes/catalog-prices.js";
import { configRoutes } from "./routes/config.js";
import { codeRoutes } from "./routes/codes.js";
import { keyRoutes } from "./routes/keys.js";
import { providerKeyRoutes } from "./routes/provider-keys.js";
import type { AdminRoute } from "./routes/route.js";
import { stripeEventRoutes } from "./routes/stripe-events.js";
import { usageAuditRoutes } from "./routes/usage-audit.js";
import { workspaceRoutes } from "./routes/workspaces.js";
import { tagBudgetRoutes } from "./routes/tag-budgets.js";
import { cacheSettingRoutes } from "./routes/cache-settings.js";
import { fileTextFieldsOf, refuseUnstorableText } from "../core/stored-text.js";

export const ADMIN_API_PREFIX = "/admin/v1";

/** Every admin API route (tests walk this list to check each one's scope). */
export const ADMIN_API_ROUTES: readonly AdminRoute[] = [
  ...accountRoutes,
  ...codeRoutes,
  ...stripeEventRoutes,
  ...keyRoutes,
  ...providerKeyRoutes,
  ...usageAuditRoutes,
  ...configRoutes,
  ...catalogRoutes,
  ...catalogEntityRoutes,
  catalogEntryOptionsRoute,
  ...catalogPriceRoutes,
  ...workspaceRoutes,
  ...tagBudgetRoutes,
  ...cacheSettingRoutes,
  ...alertRoutes,
];

export function registerAdminApiRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.register(
    async (api) => {
      api.addHook("onRequest", async (request, reply) => {
        reply.header("cache-control", "no-store");
        await authenticateAdmin(request, ctx.store);
      });
      // The query and path are checked for every route by the server (src/http/server.ts).
      api.addHook("preValidation", async (request) => refuseUnstorableText({ body: request.body }, fileTextFieldsOf(request)));
      for (const route of ADMIN_API_ROUTES) {
        api.route({
          method: route.method,
          url: route.url,
          ...(route.fileTextFields && { config: { fileTextFields: route.fileTextFields } }),
          onRequest: async (request) => {
            requireScope(request, route.scope);
          },
          handler: (request, reply) => route.handler(request, reply, ctx),
        });
      }
    },
    { prefix: ADMIN_API_PREFIX },
  );
}
