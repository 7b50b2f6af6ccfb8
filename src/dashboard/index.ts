// The dashboard: a JSON API under /dashboard/api (session cookie + CSRF token, errors in the OpenAI
// shape with X-Request-ID) and the web UI under /dashboard. Registered from app.ts's ROUTES.
import type { FastifyInstance } from "fastify";
import type { RouteContext } from "../http/route-context.js";
import { registerAccountRoutes } from "./routes/account-routes.js";
import { registerAdminRoutes } from "./routes/admin-routes.js";
import { registerAlertRoutes } from "./routes/alert-routes.js";
import { registerCatalogRoutes } from "./routes/catalog-routes.js";
import { registerCatalogEntityRoutes } from "./routes/catalog-entity-routes.js";
import { registerCatalogPriceRoutes } from "./routes/catalog-price-routes.js";
import { registerAuthRoutes } from "./routes/auth-routes.js";
import { registerOidcRoutes } from "./routes/oidc-routes.js";
import { registerCodeRoutes } from "./routes/code-routes.js";
import { registerTopupRoutes } from "./routes/topup-routes.js";
import { registerKeyRoutes } from "./routes/key-routes.js";
import { registerModelRoutes } from "./routes/model-routes.js";
import { registerRequestLogRoutes } from "./routes/request-log-routes.js";
import { registerUsageRoutes } from "./routes/usage-routes.js";
import { registerWorkspaceRoutes } from "./routes/workspace-routes.js";
import { registerTagBudgetRoutes } from "./routes/tag-budget-routes.js";
import { registerCacheSettingRoutes } from "./routes/cache-setting-routes.js";
import { isSafeMethod, requireActive, requireSession } from "./session-auth.js";
import { registerStaticRoutes } from "./static-files.js";
import { fileTextFieldsOf, refuseUnstorableText } from "../core/stored-text.js";

export const DASHBOARD_API_PREFIX = "/dashboard/api";

export function registerDashboardRoutes(app: FastifyInstance, ctx: RouteContext): void {
  // Raw keys and account data pass through here: nothing may be cached by a browser or proxy.
  app.register(
    async (api) => {
      api.addHook("onRequest", async (_request, reply) => {
        reply.header("cache-control", "no-store");
      });
      // Before any handler: a NUL is refused the same on both databases, not a 500 on PostgreSQL.
      // The query and path are checked for every route by the server (src/http/server.ts).
      api.addHook("preValidation", async (request) => refuseUnstorableText({ body: request.body }, fileTextFieldsOf(request)));
      registerAuthRoutes(api, ctx);
      registerOidcRoutes(api, ctx);
      // Everything else needs a live session (and, for writes, the CSRF token) before the body is read.
      // Every write in this scope also needs an active account: a suspended or closed one (an
      // administrator included) may sign in, read and sign out, and change nothing. No write is
      // exempt: sign-out lives in the auth routes above, and leaving or revoking needs no exemption
      // because the account's keys are already refused at the gateway while it is not active.
      await api.register(async (signedIn) => {
        signedIn.addHook("onRequest", async (request) => {
          const { account } = await requireSession(request, ctx);
          if (!isSafeMethod(request.method)) requireActive(account);
        });
        registerAccountRoutes(signedIn, ctx);
        registerKeyRoutes(signedIn, ctx);
        registerModelRoutes(signedIn, ctx);
        registerUsageRoutes(signedIn, ctx);
        registerRequestLogRoutes(signedIn, ctx);
        registerWorkspaceRoutes(signedIn, ctx);
        registerTagBudgetRoutes(signedIn, ctx);
        registerCacheSettingRoutes(signedIn, ctx);
        registerAdminRoutes(signedIn, ctx);
        registerCatalogRoutes(signedIn, ctx);
        registerCatalogEntityRoutes(signedIn, ctx);
        registerCatalogPriceRoutes(signedIn, ctx);
        registerCodeRoutes(signedIn, ctx);
        registerTopupRoutes(signedIn, ctx);
        registerAlertRoutes(signedIn, ctx);
      });
    },
    { prefix: DASHBOARD_API_PREFIX },
  );
  registerStaticRoutes(app);
}
