// The /admin/v1 operations of the OpenAPI document (admin tokens). Request schemas come from the
// admin route modules; answers from response-schemas.ts.
import { z } from "zod";
import { idempotencyHeaderSchema } from "../admin/idempotency.js";
import { accountSchemas } from "../admin/routes/accounts.js";
import { keySchemas } from "../admin/routes/keys.js";
import { providerKeySchemas } from "../admin/routes/provider-keys.js";
import { catalogSchemas } from "../admin/routes/catalog.js";
import { configSchemas } from "../admin/routes/config.js";
import { codeSchemas } from "../admin/routes/codes.js";
import { usageAuditSchemas } from "../admin/routes/usage-audit.js";
import { ADMIN_CATALOG_PRICE_OPERATIONS } from "./operations-catalog-prices.js";
import { admin, codeWrap, created, keyWrap, ok, type OperationSpec } from "./operation-spec.js";
import * as r from "./response-schemas.js";

const accountWrap = z.object({ account: r.adminAccountViewSchema });

export const ADMIN_OPERATIONS: readonly OperationSpec[] = [
  // ---- /admin/v1 ----
  admin({
    method: "GET",
    path: "/accounts",
    summary: "List accounts (cursor paging, search)",
    query: accountSchemas.listQuery,
    responses: ok(r.adminPage(r.adminAccountViewSchema)),
  }),
  admin({
    method: "POST",
    path: "/accounts",
    summary: "Create an account (with password_link: true, also its person's set-password link)",
    body: accountSchemas.createBody,
    responses: created(accountWrap.extend({ password_link: r.passwordLinkViewSchema.optional() })),
  }),
  admin({
    method: "POST",
    path: "/accounts/:id/password-link",
    summary: "A set-password link for an account's person (never an administrator's)",
    params: accountSchemas.params,
    responses: created(r.passwordLinkViewSchema),
  }),
  admin({ method: "GET", path: "/accounts/:id", summary: "One account", params: accountSchemas.params, responses: ok(accountWrap) }),
  admin({ method: "PATCH", path: "/accounts/:id", summary: "Change an account", params: accountSchemas.params, body: accountSchemas.changeBody, responses: ok(accountWrap) }),
  ...(["credit", "debit"] as const).map((kind) =>
    admin({
      method: "POST",
      path: `/accounts/:id/${kind}s`,
      summary: `${kind === "credit" ? "Credit" : "Debit"} an account (Idempotency-Key)`,
      params: accountSchemas.params,
      headers: idempotencyHeaderSchema,
      body: accountSchemas.balanceBody,
      responses: ok(z.object({ object: z.literal(kind), account: r.adminAccountViewSchema, reason: z.string() })),
    }),
  ),
  admin({
    method: "GET",
    path: "/accounts/:id/keys",
    summary: "An account's keys",
    params: keySchemas.accountParams,
    responses: ok(z.object({ object: z.literal("list"), data: z.array(r.keyViewSchema) })),
  }),
  admin({
    method: "POST",
    path: "/accounts/:id/keys",
    summary: "Create a key (the raw key is shown once)",
    params: keySchemas.accountParams,
    body: keySchemas.createBody,
    responses: created(z.object({ key: r.keyViewSchema, raw_key: z.string() })),
  }),
  admin({ method: "GET", path: "/keys/:id", summary: "One key", params: keySchemas.keyParams, responses: ok(keyWrap) }),
  admin({ method: "PATCH", path: "/keys/:id", summary: "Change a key's caps and policy", params: keySchemas.keyParams, body: keySchemas.changeBody, responses: ok(keyWrap) }),
  admin({ method: "POST", path: "/keys/:id/revoke", summary: "Revoke a key", params: keySchemas.keyParams, responses: ok(keyWrap) }),
  admin({
    method: "GET",
    path: "/accounts/:id/provider-keys",
    summary: "An account's own upstream keys (last four characters only)",
    params: providerKeySchemas.accountParams,
    responses: ok(z.object({ object: z.literal("list"), data: z.array(r.providerKeyViewSchema) })),
  }),
  admin({
    method: "POST",
    path: "/accounts/:id/provider-keys",
    summary: "Add an upstream key to an account",
    params: providerKeySchemas.accountParams,
    body: providerKeySchemas.addBody,
    responses: created(z.object({ provider_key: r.providerKeyViewSchema })),
  }),
  admin({ method: "DELETE", path: "/accounts/:id/provider-keys/:keyId", summary: "Remove an upstream key", params: providerKeySchemas.keyParams, responses: ok(r.deletedSchema) }),
  admin({
    method: "GET",
    path: "/accounts/:id/usage",
    summary: "An account's usage summary",
    params: usageAuditSchemas.accountParams,
    query: usageAuditSchemas.usageQuery,
    responses: ok(r.usageSummarySchema.extend({ account_id: z.string() })),
  }),
  admin({ method: "GET", path: "/audit", summary: "The audit log, newest first", query: usageAuditSchemas.auditQuery, responses: ok(r.adminPage(r.auditViewSchema)) }),
  admin({
    method: "POST",
    path: "/config/reload",
    summary: "Re-read the config file and swap it in when valid (422 config_reload_refused otherwise)",
    body: configSchemas.reloadBody,
    responses: ok(r.configReloadSchema),
  }),
  admin({ method: "GET", path: "/catalog", summary: "The live catalog: its source, version, document and provider keys", responses: ok(r.liveCatalogSchema) }),
  admin({
    method: "POST",
    path: "/catalog/versions",
    summary: "Write a new catalog version (every error at once; 409 when base_version is not the latest or the catalog is read-only)",
    body: catalogSchemas.writeBody,
    responses: created(r.catalogVersionSchema),
  }),
  admin({
    method: "GET",
    path: "/catalog/versions",
    summary: "Catalog versions, newest first",
    query: catalogSchemas.versionsQuery,
    responses: ok(z.object({ object: z.literal("list"), data: z.array(r.catalogVersionSchema), has_more: z.boolean() })),
  }),
  admin({ method: "GET", path: "/catalog/versions/:version", summary: "One catalog version", params: catalogSchemas.versionParams, responses: ok(r.liveCatalogSchema) }),
  admin({ method: "GET", path: "/catalog/diff", summary: "What changed between two catalog versions", query: catalogSchemas.diffQuery, responses: ok(r.catalogDiffSchema) }),
  admin({
    method: "POST",
    path: "/catalog/rollback",
    summary: "Roll the catalog back to a version (itself a new version)",
    body: catalogSchemas.rollbackBody,
    responses: created(r.catalogVersionSchema),
  }),
  ...ADMIN_CATALOG_PRICE_OPERATIONS,
  admin({
    method: "POST",
    path: "/catalog/provider-keys",
    summary: "Add a shared key to a catalog provider (stored encrypted, shown by its last four characters)",
    body: catalogSchemas.keyBody,
    responses: created(z.object({ provider_key: r.catalogProviderKeySchema })),
  }),
  admin({
    method: "PATCH",
    path: "/catalog/provider-keys/:keyId",
    summary: "Enable or disable a catalog provider's key, a pk_ key of the database or an fk_ key of the config file (a key the upstream refused is disabled by the gateway)",
    params: catalogSchemas.keyParams,
    body: catalogSchemas.keyStatusBody,
    responses: ok(z.object({ provider_key: r.catalogProviderKeySchema })),
  }),
  admin({
    method: "POST",
    path: "/catalog/provider-keys/:keyId/test",
    summary:
      "Test a provider key: the smallest request its type allows, with its status, latency and cost (charged to the operator, not a customer; a key refused with 401/403 is disabled)",
    params: catalogSchemas.keyParams,
    responses: ok(r.providerKeyTestSchema),
  }),
  admin({
    method: "DELETE",
    path: "/catalog/provider-keys/:keyId",
    summary: "Remove a catalog provider's key",
    params: catalogSchemas.keyParams,
    responses: ok(z.object({ provider_key: r.catalogProviderKeySchema, deleted: z.literal(true) })),
  }),
  admin({
    method: "POST",
    path: "/codes",
    summary: "Mint redemption codes (their texts are in this answer only)",
    body: codeSchemas.mintBody,
    responses: created(r.mintedCodesSchema),
  }),
  admin({
    method: "GET",
    path: "/codes",
    summary: "Redemption codes, newest first (by batch or state)",
    query: codeSchemas.listQuery,
    responses: ok(r.adminPage(r.codeViewSchema)),
  }),
  admin({ method: "POST", path: "/codes/:id/revoke", summary: "Revoke an unused redemption code", params: codeSchemas.params, responses: ok(codeWrap) }),
];
