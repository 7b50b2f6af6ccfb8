// The response cache's opt-in from the dashboard (ADR 0044; docs/dashboard.md): a signed-in user's own
// keys and, for a workspace's owners and admins, the workspace. The same bounds and audit rows as the
// admin API (src/admin/cache-settings.ts); another account's key or workspace answers 404, a workspace
// member who is not an admin 403 on a change.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { CacheSettings } from "../../config/cache-settings.js";
import type { RouteContext } from "../../http/route-context.js";
import { cacheSubject, type CacheSetting, type CacheSubjectKind } from "../../store/cache-settings-store.js";
import { cacheSettingBody, cacheSettingFrom, writeCacheSetting } from "../../admin/cache-settings.js";
import { parseWith } from "../../admin/validate.js";
import { dashboardActor } from "./admin-routes.js";
import { keyRouteSchemas, ownKey } from "./key-routes.js";
import { membershipOf, requireRole, workspaceRouteSchemas } from "./workspace-routes.js";

/** Request schemas of this file (OpenAPI is generated from these). */
export const cacheSettingRouteSchemas = { keyParams: keyRouteSchemas.params, workspaceParams: workspaceRouteSchemas.wsParams, body: cacheSettingBody };

/** What the request path applies (as ResponseCache.policyFor does): the key's own row, else its workspace's. */
function appliedSetting(setting: CacheSetting, source: CacheSubjectKind, sourceId: string, settings: CacheSettings) {
  return {
    source,
    source_id: sourceId,
    ttl_seconds: Math.min(Math.max(setting.ttlSeconds, settings.minTtlSeconds), settings.maxTtlSeconds),
    scope: setting.scope === "gateway" && settings.allowGatewayScope ? "gateway" : "account",
  };
}

async function dashboardView(ctx: RouteContext, settings: CacheSettings, kind: CacheSubjectKind, id: string, workspaceId: string | null) {
  const ownSubject = cacheSubject(kind, id);
  const workspaceSubject = workspaceId === null ? null : cacheSubject("workspace", workspaceId);
  const rows = await ctx.store.cacheSettings.read(workspaceSubject === null ? [ownSubject] : [ownSubject, workspaceSubject]);
  const own = rows.get(ownSubject);
  const inherited = workspaceSubject === null ? undefined : rows.get(workspaceSubject);
  return {
    subject_type: kind,
    id,
    cache: own ? { ttl_seconds: own.ttlSeconds, scope: own.scope, updated_at: new Date(own.updatedAt).toISOString() } : null,
    applies: own ? appliedSetting(own, kind, id, settings) : inherited && workspaceId !== null ? appliedSetting(inherited, "workspace", workspaceId, settings) : null,
    bounds: {
      default_ttl_seconds: settings.defaultTtlSeconds,
      min_ttl_seconds: settings.minTtlSeconds,
      max_ttl_seconds: settings.maxTtlSeconds,
      allow_gateway_scope: settings.allowGatewayScope,
    },
  };
}

export function registerCacheSettingRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const settingsOf = (request: FastifyRequest) => request.snapshot.config.cache;
  const change = async (request: FastifyRequest, kind: CacheSubjectKind, id: string, remove: boolean) => {
    const setting = remove ? null : cacheSettingFrom(parseWith(cacheSettingBody, request.body), settingsOf(request), Date.now());
    await writeCacheSetting(ctx.store, dashboardActor(request), kind, id, setting);
    // This process applies it at once; the others within SETTINGS_TTL_MS.
    ctx.pipeline.responseCache?.forget();
  };
  const ownKeyOf = async (request: FastifyRequest) => {
    const { id } = parseWith(keyRouteSchemas.params, request.params, "id");
    return ownKey(ctx, request.dashboard.account.id, id);
  };
  /** Any member reads the workspace's setting; owners and admins change it. */
  const workspaceOf = async (request: FastifyRequest, forChange: boolean) => {
    const { id } = parseWith(workspaceRouteSchemas.wsParams, request.params, "id");
    const { role } = await membershipOf(ctx, id, request.dashboard.account);
    if (forChange) requireRole(role, "admin", "set the workspace's response cache");
    return id;
  };

  app.get("/keys/:id/cache", async (request) => {
    const key = await ownKeyOf(request);
    return dashboardView(ctx, settingsOf(request), "key", key.id, key.workspaceId);
  });
  for (const method of ["PATCH", "DELETE"] as const) {
    app.route({
      method,
      url: "/keys/:id/cache",
      handler: async (request) => {
        const key = await ownKeyOf(request);
        await change(request, "key", key.id, method === "DELETE");
        return dashboardView(ctx, settingsOf(request), "key", key.id, key.workspaceId);
      },
    });
  }

  app.get("/workspaces/:id/cache", async (request) => {
    const id = await workspaceOf(request, false);
    return dashboardView(ctx, settingsOf(request), "workspace", id, null);
  });
  for (const method of ["PATCH", "DELETE"] as const) {
    app.route({
      method,
      url: "/workspaces/:id/cache",
      handler: async (request) => {
        const id = await workspaceOf(request, true);
        await change(request, "workspace", id, method === "DELETE");
        return dashboardView(ctx, settingsOf(request), "workspace", id, null);
      },
    });
  }
}
