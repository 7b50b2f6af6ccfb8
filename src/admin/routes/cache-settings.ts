// /admin/v1/keys/:id/cache and /admin/v1/workspaces/:id/cache: a key's or a workspace's use of the
// response cache (ADR 0044): GET it, PATCH to turn it on or change it, DELETE to turn it off.
import { z } from "zod";
import { GatewayError } from "../../errors/catalogue.js";
import type { RouteContext } from "../../http/route-context.js";
import type { CacheSubjectKind } from "../../store/cache-settings-store.js";
import { adminActor } from "../auth.js";
import { cacheSettingBody, cacheSettingFrom, cacheSettingView, writeCacheSetting } from "../cache-settings.js";
import type { AdminScope } from "../scopes.js";
import { parseWith } from "../validate.js";
import { id, type AdminRoute } from "./route.js";

export const cacheSettingSchemas = { params: z.object({ id }), body: cacheSettingBody };

async function subjectOr404(ctx: RouteContext, kind: CacheSubjectKind, subjectId: string): Promise<void> {
  const found = kind === "key" ? await ctx.store.keys.get(subjectId) : await ctx.store.workspaces.get(subjectId);
  if (found === null) throw new GatewayError("not_found", `No ${kind} ${subjectId}.`);
}

function routesFor(kind: CacheSubjectKind, path: string, read: AdminScope, write: AdminScope): AdminRoute[] {
  const subjectOf = async (params: unknown, ctx: RouteContext) => {
    const { id: subjectId } = parseWith(cacheSettingSchemas.params, params, "id");
    await subjectOr404(ctx, kind, subjectId);
    return subjectId;
  };
  return [
    {
      method: "GET",
      url: `${path}/:id/cache`,
      scope: read,
      async handler(request, _reply, ctx) {
        return cacheSettingView(ctx.store, kind, await subjectOf(request.params, ctx));
      },
    },
    {
      method: "PATCH",
      url: `${path}/:id/cache`,
      scope: write,
      async handler(request, _reply, ctx) {
        const subjectId = await subjectOf(request.params, ctx);
        const setting = cacheSettingFrom(parseWith(cacheSettingBody, request.body), request.snapshot.config.cache, Date.now());
        await writeCacheSetting(ctx.store, adminActor(request), kind, subjectId, setting);
        // This process applies it at once; the others within SETTINGS_TTL_MS.
        ctx.pipeline.responseCache?.forget();
        return cacheSettingView(ctx.store, kind, subjectId);
      },
    },
    {
      method: "DELETE",
      url: `${path}/:id/cache`,
      scope: write,
      async handler(request, _reply, ctx) {
        const subjectId = await subjectOf(request.params, ctx);
        await writeCacheSetting(ctx.store, adminActor(request), kind, subjectId, null);
        ctx.pipeline.responseCache?.forget();
        return cacheSettingView(ctx.store, kind, subjectId);
      },
    },
  ];
}

export const cacheSettingRoutes: AdminRoute[] = [
  ...routesFor("key", "/keys", "keys:read", "keys:write"),
  ...routesFor("workspace", "/workspaces", "workspaces:read", "workspaces:write"),
];
