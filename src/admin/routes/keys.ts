// /admin/v1 keys: an account's keys (list, create with caps), one key (get, change caps, revoke).
// The key fields an administrator sets are one zod object (keyFields) and one mapping (keyInput):
// a new key policy is one line in each.
import { z } from "zod";
import { MAX_BALANCE } from "../../core/money.js";
import { GatewayError } from "../../errors/catalogue.js";
import { parseWith } from "../validate.js";
import { keyView } from "../account-views.js";
import type { GatewayConfig } from "../../config/load.js";
import type { RouteContext } from "../../http/route-context.js";
import type { ApiKey } from "../../store/keys-store.js";
import { checkedPolicy, policyChange, policyFields } from "../key-policy-fields.js";
import { adminActor } from "../auth.js";
import { createKey, revokeKey, updateKey, type NewKey } from "../operations.js";
import { accountOr404, id, tokenCount, usd, type AdminRoute } from "./route.js";

const CAP_MAX = MAX_BALANCE * 1000n;

/** The settable fields of a key, at creation and in PATCH. */
const keyFields = {
  budget_cap_usd: usd(CAP_MAX).nullable().optional(),
  token_cap: tokenCount.nullable().optional(),
  clamp_output: z.boolean().optional(),
  // The key policies (ADR 0017), as the dashboard takes them.
  ...policyFields,
};

/** Every request schema of this file (OpenAPI is generated from these). */
export const keySchemas = {
  accountParams: z.object({ id }),
  keyParams: z.object({ id }),
  createBody: z.object({ name: z.string().trim().max(100).optional(), ...keyFields }).strict(),
  changeBody: z
    .object(keyFields)
    .strict()
    .refine((b) => Object.keys(b).length > 0, { message: "give budget_cap_usd, token_cap (null removes a cap), clamp_output or a policy field" }),
};

type KeyFields = z.infer<typeof keySchemas.changeBody>;

/** The store's names for the fields given (absent ones are left out); the policy checked against the catalogue and the account's tier. */
async function keyInput(ctx: RouteContext, config: GatewayConfig, accountId: string, body: KeyFields, current: ApiKey | null) {
  const change = policyChange(body);
  return {
    ...(body.budget_cap_usd !== undefined && { budgetCap: body.budget_cap_usd }),
    ...(body.token_cap !== undefined && { tokenCap: body.token_cap }),
    ...(body.clamp_output !== undefined && { clampOutput: body.clamp_output }),
    ...(Object.keys(change).length > 0 && { policy: await checkedPolicy(ctx, config, accountId, change, current) }),
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
      await accountOr404(ctx, accountId);
      return { object: "list", data: (await ctx.store.keys.listByAccount(accountId)).map((key) => keyView(key, ctx.pipeline.authCache.now())) };
    },
  },
  {
    method: "POST",
    url: "/accounts/:id/keys",
    scope: "keys:write",
    async handler(request, reply, ctx) {
      const { id: accountId } = parseWith(keySchemas.accountParams, request.params, "id");
      const body = parseWith(keySchemas.createBody, request.body);
      await accountOr404(ctx, accountId);
      const input = { accountId, name: body.name ?? "", ...(await keyInput(ctx, request.snapshot.config, accountId, body, null)) };
      const { key, raw } = await ctx.store.audited(adminActor(request), (tx) => createKey(tx, input));
      reply.code(201);
      // The raw key is shown here once; only its hash is stored.
      return { key: keyView(key, ctx.pipeline.authCache.now()), raw_key: raw };
    },
  },
  {
    method: "GET",
    url: "/keys/:id",
    scope: "keys:read",
    async handler(request, _reply, ctx) {
      const { id: keyId } = parseWith(keySchemas.keyParams, request.params, "id");
      return { key: keyView(await keyOr404(ctx, keyId), ctx.pipeline.authCache.now()) };
    },
  },
  {
    method: "PATCH",
    url: "/keys/:id",
    scope: "keys:write",
    async handler(request, _reply, ctx) {
      const { id: keyId } = parseWith(keySchemas.keyParams, request.params, "id");
      const body = parseWith(keySchemas.changeBody, request.body);
      const current = await keyOr404(ctx, keyId);
      const changes = await keyInput(ctx, request.snapshot.config, current.accountId, body, current);
      const key = await ctx.store.audited(adminActor(request), (tx) => updateKey(tx, keyId, changes, null));
      ctx.pipeline.authCache.invalidateKey(key.hash);
      return { key: keyView(key, ctx.pipeline.authCache.now()) };
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
      return { key: keyView(key, ctx.pipeline.authCache.now()) };
    },
  },
];
