// Every operation the OpenAPI document describes: the route as Fastify registers it, who may call
// it, and the zod schemas of its parameters, body and answers. Request schemas are the ones the
// routes validate with (imported from the route modules, never restated here); answers are
// response-schemas.ts. test/openapi checks that every registered /v1, /admin/v1 and /dashboard/api
// route has exactly one entry in OPERATIONS, and that real answers match.
//
// The entries live by family (operations-v1.ts, operations-admin.ts, operations-dashboard.ts); the
// service routes are here. The order below is the document's path order.
import { z } from "zod";
import { ADMIN_OPERATIONS } from "./operations-admin.js";
import { ADMIN_CATALOG_ENTITY_OPERATIONS } from "./operations-catalog-entities.js";
import { DASHBOARD_OPERATIONS } from "./operations-dashboard.js";
import { V1_OPERATIONS } from "./operations-v1.js";
import { WORKSPACE_BUDGET_ADMIN_OPERATIONS, WORKSPACE_BUDGET_DASHBOARD_OPERATIONS } from "./operations-workspace-budgets.js";
import { CACHE_SETTING_ADMIN_OPERATIONS, CACHE_SETTING_DASHBOARD_OPERATIONS } from "./operations-cache-settings.js";
import { GEMINI_OPERATIONS } from "./operations-gemini.js";
import { STRIPE_ADMIN_OPERATIONS, STRIPE_DASHBOARD_OPERATIONS, STRIPE_WEBHOOK_OPERATIONS } from "./operations-stripe.js";
import { MCP_OPERATIONS } from "./operations-mcp.js";
import { TAG_BUDGET_ADMIN_OPERATIONS, TAG_BUDGET_DASHBOARD_OPERATIONS } from "./operations-tag-budgets.js";
import { ALERT_ADMIN_OPERATIONS, ALERT_DASHBOARD_OPERATIONS } from "./operations-alerts.js";
import { ok, type OperationSpec } from "./operation-spec.js";
import * as r from "./response-schemas.js";

export type { Auth, HttpMethod, OperationSpec, RawContent, ResponseSpec } from "./operation-spec.js";

const SERVICE_OPERATIONS: readonly OperationSpec[] = [
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
];

export const OPERATIONS: readonly OperationSpec[] = [
  ...SERVICE_OPERATIONS,
  ...STRIPE_WEBHOOK_OPERATIONS,
  ...V1_OPERATIONS,
  ...GEMINI_OPERATIONS,
  ...MCP_OPERATIONS,
  ...ADMIN_OPERATIONS,
  ...ADMIN_CATALOG_ENTITY_OPERATIONS,
  ...WORKSPACE_BUDGET_ADMIN_OPERATIONS,
  ...STRIPE_ADMIN_OPERATIONS,
  ...TAG_BUDGET_ADMIN_OPERATIONS,
  ...CACHE_SETTING_ADMIN_OPERATIONS,
  ...ALERT_ADMIN_OPERATIONS,
  ...DASHBOARD_OPERATIONS,
  ...WORKSPACE_BUDGET_DASHBOARD_OPERATIONS,
  ...STRIPE_DASHBOARD_OPERATIONS,
  ...TAG_BUDGET_DASHBOARD_OPERATIONS,
  ...ALERT_DASHBOARD_OPERATIONS,
  ...CACHE_SETTING_DASHBOARD_OPERATIONS,
];
