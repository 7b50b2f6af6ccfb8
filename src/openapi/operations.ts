// Every operation the OpenAPI document describes: the route as Fastify registers it, who may call
// it, and the zod schemas of its parameters, body and answers. Request schemas are the ones the
// routes validate with (imported from the route modules, never restated here); answers are
// response-schemas.ts. test/openapi checks that every registered /v1, /admin/v1 and /dashboard/api
// route has exactly one entry here, and that real answers match.
import { z } from "zod";
import { idempotencyHeaderSchema } from "../admin/idempotency.js";
import { accountSchemas } from "../admin/routes/accounts.js";
import { keySchemas } from "../admin/routes/keys.js";
import { providerKeySchemas } from "../admin/routes/provider-keys.js";
import { configSchemas } from "../admin/routes/config.js";
import { codeSchemas } from "../admin/routes/codes.js";
import { usageAuditSchemas } from "../admin/routes/usage-audit.js";
import { adminRouteSchemas } from "../dashboard/routes/admin-routes.js";
import { authRouteSchemas } from "../dashboard/routes/auth-routes.js";
import { codeRouteSchemas } from "../dashboard/routes/code-routes.js";
import { keyRouteSchemas } from "../dashboard/routes/key-routes.js";
import { modelRouteSchemas } from "../dashboard/routes/model-routes.js";
import { requestLogRouteSchemas } from "../dashboard/routes/request-log-routes.js";
import { usageRouteSchemas } from "../dashboard/routes/usage-routes.js";
import { workspaceRouteSchemas } from "../dashboard/routes/workspace-routes.js";
import { confirmQuery } from "../dashboard/validate.js";
import { embeddingRequestSchema } from "../media/embeddings/embedding-request.js";
import { imageRequestSchema } from "../media/images/image-request.js";
import { videoReadSchemas } from "../media/videos/read-video.js";
import { videoJsonRequestSchema, videoRequestSchema } from "../media/videos/video-request.js";
import { usageQuerySchema } from "../http/routes/account.js";
import { anthropicModelQuerySchema } from "../http/routes/models.js";
import { requestIdParamSchema } from "../http/routes/request-record.js";
import { chatRequestSchema, countTokensRequestSchema, messagesRequestSchema, responsesRequestSchema } from "../pipeline/formats/request-schemas.js";
import * as r from "./response-schemas.js";

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

/**
 * Who may call: an API key (Bearer or x-api-key), an admin token, a dashboard session (writes also
 * need the CSRF header), the metrics token, or anyone.
 */
export type Auth = "api_key" | "admin_token" | "session" | "metrics_token" | "none";

/** A non-JSON answer: its media type and, for text, a schema of the text. */
export interface RawContent {
  mediaType: string;
  description: string;
}

export interface ResponseSpec {
  description: string;
  /** The JSON body; absent for an answer without one (204, 304). */
  json?: z.ZodType;
  /** Other media types the answer may have (a stream, a CSV file, a video). */
  raw?: RawContent[];
}

export interface OperationSpec {
  method: HttpMethod;
  /** The path as Fastify registers it (`:id`, or `*` for a wildcard, which `wildcard` names). */
  route: string;
  wildcard?: string;
  summary: string;
  tag: "v1" | "admin" | "dashboard" | "service";
  auth: Auth;
  /** The error envelope of the route's refusals. */
  errorShape: "openai" | "anthropic" | "openai_or_anthropic";
  params?: z.ZodObject;
  query?: z.ZodObject;
  headers?: z.ZodObject;
  body?: z.ZodType;
  /** Other media types the body may come as, each with its schema (JSON is `body`). */
  otherBodies?: Record<string, z.ZodType>;
  responses: Record<number, ResponseSpec>;
  /** The admin scope the route needs (admin routes). */
  scope?: string;
}

const sse = (format: string): RawContent => ({ mediaType: "text/event-stream", description: `stream: true: ${format} streaming events` });
const ok = (json: z.ZodType, description = "OK"): Record<number, ResponseSpec> => ({ 200: { description, json } });
const created = (json: z.ZodType): Record<number, ResponseSpec> => ({ 201: { description: "Created", json } });
const noContent: Record<number, ResponseSpec> = { 204: { description: "Done; no body" } };

const ADMIN = "/admin/v1";
const DASH = "/dashboard/api";
const accountWrap = z.object({ account: r.adminAccountViewSchema });
const keyWrap = z.object({ key: r.keyViewSchema });
const workspaceView = z.object({ id: z.string(), name: z.string(), created_by: z.string(), created_at: z.string().nullable() });
const memberView = z.object({ account_id: z.string(), email: z.string(), role: z.enum(["member", "admin", "owner"]), joined_at: z.string().nullable() });
const role = z.enum(["member", "admin", "owner"]);
const sessionView = z.object({ account: r.accountViewSchema, csrf_token: z.string() });
const ledgerPageView = z.object({ data: z.array(r.ledgerRowViewSchema), next_before: z.string().nullable() });
const codeWrap = z.object({ code: r.codeViewSchema });
// Path parameters no route checks beyond being a path segment (the lookup answers 404).
const modelParam = z.object({ id: z.string() });
const responseIdParam = z.object({ id: z.string() });

const v1 = (spec: Omit<OperationSpec, "tag" | "auth" | "errorShape"> & Partial<Pick<OperationSpec, "auth" | "errorShape">>): OperationSpec => ({
  tag: "v1",
  auth: "api_key",
  errorShape: "openai",
  ...spec,
});
const admin = (spec: Omit<OperationSpec, "tag" | "auth" | "errorShape" | "route"> & { path: string }): OperationSpec => ({
  tag: "admin",
  auth: "admin_token",
  errorShape: "openai",
  route: `${ADMIN}${spec.path}`,
  ...spec,
});
const dash = (spec: Omit<OperationSpec, "tag" | "auth" | "errorShape" | "route"> & { path: string; auth?: Auth }): OperationSpec => ({
  tag: "dashboard",
  auth: "session",
  errorShape: "openai",
  route: `${DASH}${spec.path}`,
  ...spec,
});

export const OPERATIONS: readonly OperationSpec[] = [
  // ---- service ----
  { method: "GET", route: "/healthz", summary: "Liveness", tag: "service", auth: "none", errorShape: "openai", responses: ok(z.object({ status: z.literal("ok") })) },
  {
    method: "GET",
    route: "/readyz",
    summary: "Readiness: the database answers",
    tag: "service",
    auth: "none",
    errorShape: "openai",
    responses: {
      200: {
        description: "Ready, with the serving config's version (SHA-256 of the file) and load time",
        json: z.object({ status: z.literal("ready"), config: r.configVersionSchema }),
      },
      503: { description: "Not ready", json: z.object({ status: z.string(), config: r.configVersionSchema.optional() }) },
    },
  },
  {
    method: "GET",
    route: "/openapi.json",
    summary: "This document",
    tag: "service",
    auth: "none",
    errorShape: "openai",
    responses: ok(z.looseObject({ openapi: z.string() }), "The OpenAPI 3.1 description of the gateway"),
  },
  {
    method: "GET",
    route: "/metrics",
    summary: "Prometheus metrics (registered only when metrics.token_env is configured)",
    tag: "service",
    auth: "metrics_token",
    errorShape: "openai",
    responses: { 200: { description: "Prometheus text exposition", raw: [{ mediaType: "text/plain", description: "Prometheus text format" }] } },
  },

  // ---- /v1: models and the account ----
  v1({
    method: "GET",
    route: "/v1/models",
    summary: "The models this key may use (Anthropic's list shape to Anthropic-style callers)",
    errorShape: "openai_or_anthropic",
    query: anthropicModelQuerySchema,
    responses: ok(r.modelListSchema),
  }),
  v1({ method: "GET", route: "/v1/models/*", wildcard: "id", summary: "One model", errorShape: "openai_or_anthropic", params: modelParam, responses: ok(r.modelSchema) }),
  v1({
    method: "GET",
    route: "/v1/catalog",
    summary: "The public catalogue: every model, its prices and tiers (cacheable, ETag)",
    auth: "none",
    responses: { 200: { description: "OK", json: r.catalogSchema }, 304: { description: "Not modified (If-None-Match)" } },
  }),
  v1({ method: "GET", route: "/v1/me", summary: "The key's account, policy, limits and this month's usage", responses: ok(r.meSchema) }),
  v1({ method: "GET", route: "/v1/usage", summary: "The key's usage by model and by day", query: usageQuerySchema, responses: ok(r.keyUsageSchema) }),
  v1({
    method: "GET",
    route: "/v1/requests/*",
    wildcard: "request_id",
    summary: "One request of the account (its ledger row)",
    params: requestIdParamSchema,
    responses: ok(r.requestRecordSchema),
  }),

  // ---- /v1: model routes ----
  v1({
    method: "POST",
    route: "/v1/chat/completions",
    summary: "OpenAI Chat Completions",
    body: chatRequestSchema,
    responses: { 200: { description: "The completion, or its stream", json: r.chatCompletionSchema, raw: [sse("Chat Completions")] } },
  }),
  v1({
    method: "POST",
    route: "/v1/messages",
    summary: "Anthropic Messages",
    errorShape: "anthropic",
    body: messagesRequestSchema,
    responses: { 200: { description: "The message, or its stream", json: r.messageSchema, raw: [sse("Anthropic Messages")] } },
  }),
  v1({
    method: "POST",
    route: "/v1/messages/count_tokens",
    summary: "Anthropic token counting (never billed)",
    errorShape: "anthropic",
    body: countTokensRequestSchema,
    responses: ok(r.countTokensSchema),
  }),
  v1({
    method: "POST",
    route: "/v1/responses",
    summary: "OpenAI Responses",
    body: responsesRequestSchema,
    responses: { 200: { description: "The response, or its stream", json: r.responseObjectSchema, raw: [sse("Responses")] } },
  }),
  v1({ method: "GET", route: "/v1/responses/:id", summary: "A stored response", params: responseIdParam, responses: ok(r.responseObjectSchema) }),
  v1({ method: "POST", route: "/v1/embeddings", summary: "OpenAI Embeddings", body: embeddingRequestSchema, responses: ok(r.embeddingListSchema) }),
  v1({ method: "POST", route: "/v1/images/generations", summary: "OpenAI Images", body: imageRequestSchema, responses: ok(r.imagesResponseSchema) }),
  v1({
    method: "POST",
    route: "/v1/videos",
    summary: "Start a video generation (OpenAI Videos)",
    body: videoJsonRequestSchema,
    otherBodies: { "multipart/form-data": videoRequestSchema },
    responses: ok(r.videoSchema),
  }),
  v1({ method: "GET", route: "/v1/videos/:id", summary: "A video task", params: videoReadSchemas.params, query: videoReadSchemas.pollQuery, responses: ok(r.videoSchema) }),
  v1({
    method: "GET",
    route: "/v1/videos/:id/content",
    summary: "A finished video's bytes",
    params: videoReadSchemas.params,
    query: videoReadSchemas.contentQuery,
    responses: {
      200: { description: "The video file", raw: [{ mediaType: "application/octet-stream", description: "The video, in the upstream's media type (video/mp4 usually)" }] },
    },
  }),

  // ---- /admin/v1 ----
  admin({
    method: "GET",
    path: "/accounts",
    summary: "List accounts (cursor paging, search)",
    query: accountSchemas.listQuery,
    responses: ok(r.adminPage(r.adminAccountViewSchema)),
  }),
  admin({ method: "POST", path: "/accounts", summary: "Create an account", body: accountSchemas.createBody, responses: created(accountWrap) }),
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

  // ---- /dashboard/api: sign-in ----
  dash({ method: "GET", path: "/config", auth: "none", summary: "Public settings of the sign-in page", responses: ok(z.object({ signup: z.string() })) }),
  dash({ method: "GET", path: "/session", summary: "The signed-in account and its CSRF token", responses: ok(sessionView) }),
  dash({ method: "POST", path: "/signin", auth: "none", summary: "Sign in (sets the session cookie)", body: authRouteSchemas.signInBody, responses: ok(sessionView) }),
  dash({ method: "POST", path: "/signup", auth: "none", summary: "Sign up (sets the session cookie)", body: authRouteSchemas.signUpBody, responses: created(sessionView) }),
  dash({ method: "POST", path: "/signout", summary: "Sign out", responses: noContent }),

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
    summary: "A workspace and its members",
    params: workspaceRouteSchemas.wsParams,
    responses: ok(z.object({ workspace: workspaceView, role, members: z.array(memberView) })),
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
