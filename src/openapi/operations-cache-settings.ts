// The response cache's opt-in operations of the admin and dashboard APIs (ADR 0044): per key and per
// workspace.
import { z } from "zod";
import { cacheSettingSchemas } from "../admin/routes/cache-settings.js";
import { cacheSettingRouteSchemas } from "../dashboard/routes/cache-setting-routes.js";
import { admin, dash, ok, type OperationSpec } from "./operation-spec.js";
import { isoTime } from "./response-schema-parts.js";

/** cacheSettingView (src/admin/cache-settings.ts). */
const cacheSettingSchema = z.object({
  subject_type: z.enum(["key", "workspace"]),
  id: z.string(),
  cache: z.object({ ttl_seconds: z.number().int(), scope: z.enum(["account", "gateway"]), updated_at: isoTime }).nullable(),
});

function operationsFor(path: string, what: string): OperationSpec[] {
  return [
    admin({
      method: "GET",
      path: `${path}/:id/cache`,
      summary: `The ${what}'s use of the response cache (null: none)`,
      params: cacheSettingSchemas.params,
      responses: ok(cacheSettingSchema),
    }),
    admin({
      method: "PATCH",
      path: `${path}/:id/cache`,
      summary: `Turn the response cache on for the ${what}, or change its TTL and scope (audited)`,
      params: cacheSettingSchemas.params,
      body: cacheSettingSchemas.body,
      responses: ok(cacheSettingSchema),
    }),
    admin({
      method: "DELETE",
      path: `${path}/:id/cache`,
      summary: `Turn the response cache off for the ${what} (audited)`,
      params: cacheSettingSchemas.params,
      responses: ok(cacheSettingSchema),
    }),
  ];
}

export const CACHE_SETTING_ADMIN_OPERATIONS: readonly OperationSpec[] = [...operationsFor("/keys", "key"), ...operationsFor("/workspaces", "workspace")];

/** dashboardView (src/dashboard/routes/cache-setting-routes.ts): the row, what applies, the bounds. */
const dashboardCacheSettingSchema = cacheSettingSchema.extend({
  applies: z.object({ source: z.enum(["key", "workspace"]), source_id: z.string(), ttl_seconds: z.number().int(), scope: z.enum(["account", "gateway"]) }).nullable(),
  bounds: z.object({
    default_ttl_seconds: z.number().int(),
    min_ttl_seconds: z.number().int(),
    max_ttl_seconds: z.number().int(),
    allow_gateway_scope: z.boolean(),
  }),
});

function dashboardOperationsFor(path: string, what: string, params: z.ZodObject, who: string): OperationSpec[] {
  return [
    dash({
      method: "GET",
      path: `${path}/:id/cache`,
      summary: `The ${what}'s use of the response cache and what applies to it`,
      params,
      responses: ok(dashboardCacheSettingSchema),
    }),
    dash({
      method: "PATCH",
      path: `${path}/:id/cache`,
      summary: `Turn the response cache on for the ${what}, or change its TTL and scope (${who}; audited)`,
      params,
      body: cacheSettingRouteSchemas.body,
      responses: ok(dashboardCacheSettingSchema),
    }),
    dash({
      method: "DELETE",
      path: `${path}/:id/cache`,
      summary: `Turn the response cache off for the ${what} (${who}; audited)`,
      params,
      responses: ok(dashboardCacheSettingSchema),
    }),
  ];
}

export const CACHE_SETTING_DASHBOARD_OPERATIONS: readonly OperationSpec[] = [
  ...dashboardOperationsFor("/keys", "key", cacheSettingRouteSchemas.keyParams, "its owner"),
  ...dashboardOperationsFor("/workspaces", "workspace", cacheSettingRouteSchemas.workspaceParams, "owners and admins"),
];
