// /admin/v1 keys: an account's keys (list, create with caps), one key (get, change caps, revoke).
// The key fields an administrator sets are one zod object (keyFields) and one mapping (keyInput):
// a new key policy is one line in each.
import { z } from "zod";
import { MAX_BALANCE } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import { parseWith } from "../../dashboard/validate.js";
import { keyView } from "../../dashboard/views.js";
import type { RouteContext } from "../../http/route-context.js";
import type { ApiKey } from "../../store/keys-store.js";
import { adminActor } from "../auth.js";
import { createKey, revokeKey, updateKey, type NewKey } from "../operations.js";
import { id, tokenCount, usd, type AdminRoute } from "./route.js";

const CAP_MAX = MAX_BALANCE * 1000n;

/** The settable fields of a key, at creation and in PATCH. */
const keyFields = {
  budget_cap_usd: usd(CAP_MAX).nullable().optional(),
  token_cap: tokenCount.nullable().optional(),
  clamp_output: z.boolean().optional(),
};

/** Every request schema of this file (OpenAPI is generated from these). */
export const keySchemas = {
  accountParams: z.object({ id }),
  keyParams: z.object({ id }),
  createBody: z.object({ name: z.string().trim().max(100).optional(), ...keyFields }).strict(),
  changeBody: z
    .object(keyFields)
    .strict()
    .refine((b) => Object.keys(b).length > 0, { message: "give budget_cap_usd, token_cap (null removes a cap) or clamp_output" }),
};

type KeyFields = z.infer<typeof keySchemas.changeBody>;

/** The store's names for the fields given (absent ones are left out). */
function keyInput(body: KeyFields) {
  return {
    ...(body.budget_cap_usd !== undefined && { budgetCap: body.budget_cap_usd }),
    ...(body.token_cap !== undefined && { tokenCap: body.token_cap }),
    ...(body.clamp_output !== undefined && { clampOutput: body.clamp_output }),
  } satisfies Partial<NewKey>;
}

async function keyOr404(ctx: RouteContext, keyId: string): Promise<ApiKey> {
  const key = await ctx.store.keys.get(keyId);
  if (!key) throw new GatewayError("not_found", `No key ${keyId}.`);
  return key;
}

export const keyRoutes: AdminRoute[] = [
  {
    method: "GET",
    url: "/accounts/:id/keys",
    scope: "keys:read",
    async handler(request, _reply, ctx) {
      const { id: accountId } = parseWith(keySchemas.accountParams, request.params, "id");
      if (!(await ctx.store.accounts.get(accountId))) throw new GatewayError("not_found", `No account ${accountId}.`);
      return { object: "list", data: (await ctx.store.keys.listByAccount(accountId)).map(keyView) };
    },
  },
  {
    method: "POST",
    url: "/accounts/:id/keys",
    scope: "keys:write",
    async handler(request, reply, ctx) {
      const { id: accountId } = parseWith(keySchemas.accountParams, request.params, "id");
      const body = parseWith(keySchemas.createBody, request.body);
      if (!(await ctx.store.accounts.get(accountId))) throw new GatewayError("not_found", `No account ${accountId}.`);
      const { key, raw } = await ctx.store.audited(adminActor(request), (tx) => createKey(tx, { accountId, name: body.name ?? "", ...keyInput(body) }));
      reply.code(201);
      // The raw key is shown here once; only its hash is stored.
      return { key: keyView(key), raw_key: raw };
    },
  },
  {
    method: "GET",
    url: "/keys/:id",
    scope: "keys:read",
    async handler(request, _reply, ctx) {
      const { id: keyId } = parseWith(keySchemas.keyParams, request.params, "id");
      return { key: keyView(await keyOr404(ctx, keyId)) };
    },
  },
  {
    method: "PATCH",
    url: "/keys/:id",
    scope: "keys:write",
    async handler(request, _reply, ctx) {
      const { id: keyId } = parseWith(keySchemas.keyParams, request.params, "id");
      const body = parseWith(keySchemas.changeBody, request.body);
      await keyOr404(ctx, keyId);
      const key = await ctx.store.audited(adminActor(request), (tx) => updateKey(tx, keyId, keyInput(body), null));
      ctx.pipeline.authCache.invalidateKey(key.hash);
      return { key: keyView(key) };
    },
  },
  {
    method: "POST",
    url: "/keys/:id/revoke",
    scope: "keys:write",
    async handler(request, _reply, ctx) {
      const { id: keyId } = parseWith(keySchemas.keyParams, request.params, "id");
      await keyOr404(ctx, keyId);
      const key = await ctx.store.audited(adminActor(request), (tx) => revokeKey(tx, keyId));
      ctx.pipeline.authCache.invalidateKey(key.hash);
      await ctx.store.showAgain.forgetKey(key.id);
      return { key: keyView(key) };
    },
  },
];
