// POST /admin/v1/config/reload: re-reads and validates the config file of the process that answers
// and swaps it in when valid (decision 0021); `gateway admin config reload` calls it. Refused (422
// config_reload_refused, with the precise reason) when the file is invalid or changes a setting only
// a restart applies; the running config stays.
import { z } from "zod";
import { GatewayError } from "../../errors/catalogue.js";
import { parseWith } from "../validate.js";
import type { ReloadOutcome } from "../../http/route-context.js";
import { adminActor } from "../auth.js";
import type { AdminRoute } from "./route.js";

/** Every request schema of this file (OpenAPI is generated from these). */
export const configSchemas = {
  // Nothing to send: the file on disk is the input. An empty object (or no body) is accepted.
  reloadBody: z.object({}).strict(),
};

export const configRoutes: AdminRoute[] = [
  {
    method: "POST",
    url: "/config/reload",
    scope: "config:write",
    async handler(request, _reply, ctx) {
      parseWith(configSchemas.reloadBody, request.body ?? {});
      const outcome = await ctx.reloadConfig(adminActor(request));
      if (outcome.status === "refused") throw new GatewayError("config_reload_refused", outcome.message);
      return reloadView(outcome);
    },
  },
];

/** The answer of a reload that was not refused, in the API's snake_case. */
export function reloadView(outcome: Exclude<ReloadOutcome, { status: "refused" }>) {
  const base = { object: "config.reload" as const, status: outcome.status, version: outcome.version, loaded_at: new Date(outcome.loadedAt).toISOString() };
  if (outcome.status === "unchanged") return base;
  const c = outcome.changes;
  return {
    ...base,
    previous_version: outcome.previousVersion,
    changes: {
      models_added: c.modelsAdded,
      models_removed: c.modelsRemoved,
      models_changed: c.modelsChanged,
      providers_added: c.providersAdded,
      providers_removed: c.providersRemoved,
      providers_changed: c.providersChanged,
    },
  };
}
