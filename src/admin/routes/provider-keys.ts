// /admin/v1/accounts/:id/provider-keys: an account's own upstream keys (the ones `gateway admin
// provider-keys` manages): list (last four characters only), add, remove.
import { z } from "zod";
import { GatewayError } from "../../errors/catalogue.js";
import { parseWith } from "../validate.js";
import { adminActor } from "../auth.js";
import { addProviderKey, removeProviderKey } from "../operations.js";
import { providerKeyView } from "../views.js";
import type { ConfigSnapshot, RouteContext } from "../../http/route-context.js";
import { accountOr404, id, type AdminRoute } from "./route.js";

/**
 * Drops the account's cached own keys in the request's snapshot and in the current one: a reload
 * during the request may have built a resolver that already cached the old keys.
 */
export function invalidateOwnKeys(snapshot: ConfigSnapshot, ctx: RouteContext, accountId: string): void {
  snapshot.pipeline.upstreamKeys.invalidate(accountId);
  ctx.live.current.pipeline.upstreamKeys.invalidate(accountId);
}

/** Every request schema of this file (OpenAPI is generated from these). */
export const providerKeySchemas = {
  accountParams: z.object({ id }),
  keyParams: z.object({ id, keyId: id }),
  addBody: z.object({ provider: z.string().min(1).max(100), key: z.string().trim().min(8).max(4096), label: z.string().trim().max(100).optional() }).strict(),
};

export const providerKeyRoutes: AdminRoute[] = [
  {
    method: "GET",
    url: "/accounts/:id/provider-keys",
    scope: "provider_keys:read",
    async handler(request, _reply, ctx) {
      const { id: accountId } = parseWith(providerKeySchemas.accountParams, request.params, "id");
      await accountOr404(ctx, accountId);
      return { object: "list", data: (await ctx.store.upstreamKeys.list(accountId)).map(providerKeyView) };
    },
  },
  {
    method: "POST",
    url: "/accounts/:id/provider-keys",
    scope: "provider_keys:write",
    async handler(request, reply, ctx) {
      const { id: accountId } = parseWith(providerKeySchemas.accountParams, request.params, "id");
      const body = parseWith(providerKeySchemas.addBody, request.body);
      if (!request.snapshot.config.providers.has(body.provider)) {
        throw new GatewayError("invalid_request", `provider: unknown provider "${body.provider}"`, { param: "provider" });
      }
      await accountOr404(ctx, accountId);
      const info = await ctx.store.audited(adminActor(request), (tx) => addProviderKey(tx, { accountId, provider: body.provider, key: body.key, label: body.label ?? "" }));
      invalidateOwnKeys(request.snapshot, ctx, accountId);
      reply.code(201);
      return { provider_key: providerKeyView(info) };
    },
  },
  {
    method: "DELETE",
    url: "/accounts/:id/provider-keys/:keyId",
    scope: "provider_keys:write",
    async handler(request, _reply, ctx) {
      const { id: accountId, keyId } = parseWith(providerKeySchemas.keyParams, request.params, "id");
      await ctx.store.audited(adminActor(request), (tx) => removeProviderKey(tx, keyId, accountId));
      invalidateOwnKeys(request.snapshot, ctx, accountId);
      return { id: keyId, deleted: true };
    },
  },
];
