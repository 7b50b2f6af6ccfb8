// The response cache's opt-in operations of the admin API (ADR 0044): per key and per workspace.
import { z } from "zod";
import { cacheSettingSchemas } from "../admin/routes/cache-settings.js";
import { admin, ok, type OperationSpec } from "./operation-spec.js";
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
