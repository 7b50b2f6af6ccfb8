// The /dashboard/api operations of the OpenAPI document (session cookie, CSRF header on writes):
// sign-in, keys, models, the request log, usage, workspaces, administrators and redemption codes.
// Request schemas come from the dashboard route modules; answers from response-schemas.ts.
import { z } from "zod";
import { accountSchemas } from "../admin/routes/accounts.js";
import { providerKeySchemas } from "../admin/routes/provider-keys.js";
import { codeSchemas } from "../admin/routes/codes.js";
import { adminRouteSchemas } from "../dashboard/routes/admin-routes.js";
import { codeRouteSchemas } from "../dashboard/routes/code-routes.js";
import { keyRouteSchemas } from "../dashboard/routes/key-routes.js";
import { modelRouteSchemas } from "../dashboard/routes/model-routes.js";
import { requestLogRouteSchemas } from "../dashboard/routes/request-log-routes.js";
import { usageRouteSchemas } from "../dashboard/routes/usage-routes.js";
import { workspaceRouteSchemas } from "../dashboard/routes/workspace-routes.js";
import { confirmQuery } from "../admin/validate.js";
import { codeWrap, created, dash, keyWrap, noContent, ok, type OperationSpec } from "./operation-spec.js";
import * as r from "./response-schemas.js";
import { DASHBOARD_CATALOG_OPERATIONS } from "./operations-dashboard-catalog.js";
import { DASHBOARD_SIGN_IN_OPERATIONS } from "./operations-dashboard-sign-in.js";
import { DASHBOARD_CATALOG_ENTITY_OPERATIONS } from "./operations-catalog-entities.js";

const workspaceView = z.object({ id: z.string(), name: z.string(), created_by: z.string(), created_at: z.string().nullable() });
const memberView = z.object({ account_id: z.string(), email: z.string(), role: z.enum(["member", "admin", "owner"]), joined_at: z.string().nullable() });
const role = z.enum(["member", "admin", "owner"]);
const ledgerPageView = z.object({ data: z.array(r.ledgerRowViewSchema), next_before: z.string().nullable() });

export const DASHBOARD_OPERATIONS: readonly OperationSpec[] = [
  // ---- /dashboard/api: sign-in, sessions, passwords (operations-dashboard-sign-in.ts) ----
  ...DASHBOARD_SIGN_IN_OPERATIONS,

  // ---- /dashboard/api: keys ----
  dash({ method: "GET", path: "/keys", summary: "The account's keys", responses: ok(z.object({ data: z.array(r.keyViewSchema) })) }),
  dash({
    method: "POST",
    path: "/keys",
    summary: "Create a key (raw key once, plus a show-again token)",
    body: keyRouteSchemas.createBody,
    responses: created(z.object({ key: r.keyViewSchema, raw_key: z.string(), show_again: z.object({ token: z.string(), expires_at: z.string().nullable() }) })),
  }),
  dash({
    method: "GET",
    path: "/keys/:id",
    summary: "One key, its usage and the limits that apply",
    params: keyRouteSchemas.params,
    responses: ok(
      z.object({
        key: r.keyViewSchema,
        usage: z.object({ requests: z.number().int(), input_tokens: z.number().int(), output_tokens: z.number().int() }),
        traffic: r.trafficUseSchema,
      }),
    ),
  }),
  dash({
    method: "PATCH",
    path: "/keys/:id",
    summary: "Change a key's caps, policy and limits",
    params: keyRouteSchemas.params,
    body: keyRouteSchemas.capsBody,
    responses: ok(keyWrap),
  }),
  dash({
    method: "DELETE",
    path: "/keys/:id",
    summary: "Revoke a key, or delete it (permanent=true)",
    params: keyRouteSchemas.params,
    query: confirmQuery,
    responses: ok(z.union([keyWrap, r.deletedSchema])),
  }),
  dash({ method: "POST", path: "/keys/:id/enable", summary: "Enable a revoked key", params: keyRouteSchemas.params, responses: ok(keyWrap) }),
  dash({
    method: "POST",
    path: "/keys/:id/show-again",
    summary: "Show a new key's raw value again (within its window)",
    params: keyRouteSchemas.params,
    body: keyRouteSchemas.showAgainBody,
    responses: ok(z.object({ id: z.string(), raw_key: z.string(), expires_at: z.string().nullable() })),
  }),

  // ---- /dashboard/api: models ----
  dash({
    method: "GET",
    path: "/models",
    summary: "The models the account's tier (and a key's policy, with key_id) allows, with every price",
    query: modelRouteSchemas.query,
    responses: ok(r.dashboardModelsSchema),
  }),
  dash({
    method: "GET",
    path: "/guardrails",
    summary: "The configured guardrails (name, description, applies, mode, sides; no patterns), for the key and workspace forms",
    responses: ok(
      z.object({
        data: z.array(
          z.object({
            name: z.string(),
            description: z.string(),
            applies: z.enum(["all", "selected"]),
            mode: z.enum(["block", "mask", "log"]),
            sides: z.array(z.enum(["request", "response"])),
          }),
        ),
      }),
    ),
  }),

  // ---- /dashboard/api: the request log ----
  dash({
    method: "GET",
    path: "/requests",
    summary: "The account's requests, answered or refused, newest first",
    query: requestLogRouteSchemas.pageQuery,
    responses: ok(z.object({ data: z.array(r.requestLogViewSchema), next_cursor: z.string().nullable() })),
  }),
  dash({
    method: "GET",
    path: "/requests.csv",
    summary: "The account's requests as CSV, streamed",
    query: requestLogRouteSchemas.csvQuery,
    responses: { 200: { description: "CSV, a header line first", raw: [{ mediaType: "text/csv", description: "RFC 4180 CSV" }] } },
  }),
  dash({
    method: "GET",
    path: "/admin/requests",
    summary: "Every account's requests, and those no key was attributed to (administrators)",
    query: requestLogRouteSchemas.adminPageQuery,
    responses: ok(z.object({ data: z.array(r.adminRequestLogViewSchema), next_cursor: z.string().nullable() })),
  }),
  dash({
    method: "GET",
    path: "/admin/requests.csv",
    summary: "Every account's requests as CSV, streamed (administrators)",
    query: requestLogRouteSchemas.adminCsvQuery,
    responses: { 200: { description: "CSV, a header line first", raw: [{ mediaType: "text/csv", description: "RFC 4180 CSV" }] } },
  }),

  // ---- /dashboard/api: usage ----
  dash({
    method: "GET",
    path: "/usage",
    summary: "Balance, budget and usage of the account",
    query: usageRouteSchemas.daysQuery,
    responses: ok(
      r.usageSummarySchema.extend({
        balance: z.object({
          balance_usd: z.string(),
          held_usd: z.string(),
          total_spent_usd: z.string(),
          monthly_budget_usd: z.string().nullable(),
          monthly_token_budget: z.number().int().nullable(),
          month: z.string(),
          month_spent_usd: z.string(),
          month_tokens: z.number().int(),
          month_requests: z.number().int(),
          month_resets_at: z.string(),
        }),
      }),
    ),
  }),
  dash({
    method: "GET",
    path: "/ledger",
    summary: "The ledger, page by page",
    query: usageRouteSchemas.ledgerQuery,
    responses: ok(ledgerPageView),
  }),
  dash({
    method: "GET",
    path: "/ledger.csv",
    summary: "The ledger as CSV",
    query: usageRouteSchemas.csvQuery,
    responses: { 200: { description: "CSV, a header line first", raw: [{ mediaType: "text/csv", description: "RFC 4180 CSV" }] } },
  }),

  // ---- /dashboard/api: workspaces ----
  dash({
    method: "GET",
    path: "/workspaces",
    summary: "The account's workspaces",
    responses: ok(z.object({ data: z.array(workspaceView.extend({ role, members: z.number().int() })) })),
  }),
  dash({
    method: "POST",
    path: "/workspaces",
    summary: "Create a workspace",
    body: workspaceRouteSchemas.nameBody,
    responses: created(z.object({ workspace: workspaceView, role })),
  }),
  dash({
    method: "GET",
    path: "/workspaces/:id",
    summary: "A workspace and its members (role null: an administrator who is not a member, read-only)",
    params: workspaceRouteSchemas.wsParams,
    responses: ok(z.object({ workspace: workspaceView, role: role.nullable(), members: z.array(memberView) })),
  }),
  dash({
    method: "PATCH",
    path: "/workspaces/:id/members/:accountId",
    summary: "Change a member's role",
    params: workspaceRouteSchemas.memberParams,
    body: workspaceRouteSchemas.roleBody,
    responses: ok(z.object({ member: memberView })),
  }),
  dash({ method: "DELETE", path: "/workspaces/:id/members/:accountId", summary: "Remove a member, or leave", params: workspaceRouteSchemas.memberParams, responses: noContent }),
  dash({
    method: "GET",
    path: "/workspaces/:id/invites",
    summary: "A workspace's invites",
    params: workspaceRouteSchemas.wsParams,
    responses: ok(z.object({ data: z.array(r.inviteViewSchema) })),
  }),
  dash({
    method: "POST",
    path: "/workspaces/:id/invites",
    summary: "Invite (the token is shown once)",
    params: workspaceRouteSchemas.wsParams,
    body: workspaceRouteSchemas.inviteBody,
    responses: created(z.object({ invite: r.inviteViewSchema, token: z.string(), url: z.string() })),
  }),
  dash({ method: "DELETE", path: "/workspaces/:id/invites/:inviteId", summary: "Withdraw an invite", params: workspaceRouteSchemas.inviteParams, responses: noContent }),
  dash({
    method: "POST",
    path: "/invites/accept",
    summary: "Accept an invite",
    body: workspaceRouteSchemas.tokenBody,
    responses: ok(z.object({ workspace: workspaceView, role })),
  }),
  dash({
    method: "GET",
    path: "/workspaces/:id/keys",
    summary: "The keys shared in a workspace",
    params: workspaceRouteSchemas.wsParams,
    responses: ok(z.object({ data: z.array(r.keyViewSchema.extend({ owner_email: z.string().nullable() })) })),
  }),
  dash({
    method: "DELETE",
    path: "/workspaces/:id/keys/:keyId",
    summary: "Revoke a key shared in a workspace",
    params: workspaceRouteSchemas.keyParams,
    query: confirmQuery,
    responses: ok(keyWrap),
  }),
  dash({
    method: "GET",
    path: "/workspaces/:id/usage",
    summary: "A workspace's usage",
    params: workspaceRouteSchemas.wsParams,
    query: workspaceRouteSchemas.daysQuery,
    responses: ok(r.usageSummarySchema),
  }),

  // ---- /dashboard/api: administrators ----
  dash({
    method: "GET",
    path: "/admin/accounts",
    summary: "Every account (administrators)",
    query: adminRouteSchemas.listQuery,
    responses: ok(z.object({ data: z.array(r.adminAccountViewSchema), total: z.number().int() })),
  }),
  dash({
    method: "POST",
    path: "/admin/accounts",
    summary: "Create a person: an account without a password and its set-password link (administrators)",
    body: adminRouteSchemas.createBody,
    responses: created(z.object({ account: r.adminAccountViewSchema, password_link: r.passwordLinkViewSchema })),
  }),
  dash({
    method: "POST",
    path: "/admin/accounts/:id/password-link",
    summary: "A set-password link for another account's person (administrators)",
    params: adminRouteSchemas.params,
    responses: created(r.passwordLinkViewSchema),
  }),
  dash({
    method: "GET",
    path: "/admin/accounts/:id",
    summary: "One account and the configured tiers (administrators)",
    params: adminRouteSchemas.params,
    responses: ok(z.object({ account: r.adminAccountViewSchema, tiers: z.array(z.string()) })),
  }),
  ...(["credit", "debit"] as const).map((kind) =>
    dash({
      method: "POST",
      path: `/admin/accounts/:id/${kind}s`,
      summary: `${kind === "credit" ? "Credit" : "Debit"} an account, with its reason (administrators)`,
      params: adminRouteSchemas.params,
      body: accountSchemas.balanceBody,
      responses: ok(z.object({ object: z.literal(kind), account: r.adminAccountViewSchema, reason: z.string() })),
    }),
  ),
  dash({
    method: "GET",
    path: "/admin/accounts/:id/ledger",
    summary: "An account's ledger, page by page (administrators)",
    params: adminRouteSchemas.params,
    query: adminRouteSchemas.ledgerQuery,
    responses: ok(ledgerPageView),
  }),
  dash({
    method: "GET",
    path: "/admin/accounts/:id/provider-keys",
    summary: "An account's own upstream keys (last four characters only) and the configured providers (administrators)",
    params: adminRouteSchemas.params,
    responses: ok(z.object({ data: z.array(r.providerKeyViewSchema), providers: z.array(z.string()) })),
  }),
  dash({
    method: "POST",
    path: "/admin/accounts/:id/provider-keys",
    summary: "Add an upstream key to an account (administrators)",
    params: adminRouteSchemas.params,
    body: providerKeySchemas.addBody,
    responses: created(z.object({ provider_key: r.providerKeyViewSchema })),
  }),
  dash({
    method: "DELETE",
    path: "/admin/accounts/:id/provider-keys/:keyId",
    summary: "Remove an upstream key (administrators)",
    params: providerKeySchemas.keyParams,
    responses: ok(r.deletedSchema),
  }),
  dash({
    method: "GET",
    path: "/admin/usage",
    summary: "Usage across all accounts, by account, model and provider (administrators)",
    query: adminRouteSchemas.usageQuery,
    responses: ok(r.usageAcrossAccountsSchema),
  }),
  dash({ method: "GET", path: "/admin/upstreams", summary: "Every upstream key's and deployment's circuit breaker (administrators)", responses: ok(r.upstreamStatusesSchema) }),
  dash({
    method: "GET",
    path: "/admin/audit",
    summary: "The audit log (administrators)",
    query: adminRouteSchemas.auditQuery,
    responses: ok(z.object({ data: z.array(r.auditViewSchema) })),
  }),
  dash({
    method: "PATCH",
    path: "/admin/accounts/:id",
    summary: "Change an account's status, admin flag, clamping or limits (administrators)",
    params: adminRouteSchemas.params,
    body: adminRouteSchemas.changeBody,
    responses: ok(z.object({ account: r.adminAccountViewSchema })),
  }),

  // ---- /dashboard/api: the live catalog (administrators) ----
  ...DASHBOARD_CATALOG_OPERATIONS,
  ...DASHBOARD_CATALOG_ENTITY_OPERATIONS,

  // ---- /dashboard/api: redemption codes ----
  dash({
    method: "POST",
    path: "/redeem",
    summary: "Redeem a code for the account's balance (failures are throttled)",
    body: codeRouteSchemas.redeemBody,
    responses: ok(z.object({ credited_usd: r.usdText, code: z.object({ id: z.string(), prefix: z.string() }), account: r.accountViewSchema })),
  }),
  dash({
    method: "GET",
    path: "/admin/codes",
    summary: "Redemption codes, newest first (administrators)",
    query: codeSchemas.listQuery,
    responses: ok(z.object({ data: z.array(r.codeViewSchema), next_cursor: z.string().nullable() })),
  }),
  dash({
    method: "POST",
    path: "/admin/codes",
    summary: "Mint redemption codes; their texts are in this answer only (administrators)",
    body: codeSchemas.mintBody,
    responses: created(r.mintedCodesSchema),
  }),
  dash({
    method: "POST",
    path: "/admin/codes/:id/revoke",
    summary: "Revoke an unused redemption code (administrators)",
    params: codeSchemas.params,
    responses: ok(codeWrap),
  }),
];
