// The dashboard views' response schemas: invites, usage summaries, ledger rows, upstream
// breakers, the models page and the request log.
import { z } from "zod";
import { BASE_COUNT_COLUMNS, DIMENSIONS } from "../core/dimensions.js";
import { usdText, isoTime, nullableIso, count, summaryShape, requestCountsShape, tagUsageView } from "./response-schema-parts.js";

/** workspaceRows (admin/usage-breakdowns.ts). */
const workspaceUsageView = z.array(z.object({ workspace_id: z.string().nullable(), name: z.string().nullable(), ...summaryShape }));
/** memberRows (admin/usage-breakdowns.ts). */
const memberUsageView = z.array(z.object({ account_id: z.string(), email: z.string().nullable(), ...summaryShape }));

export const inviteViewSchema = z.object({
  id: z.string(),
  workspace_id: z.string(),
  role: z.enum(["member", "admin", "owner"]),
  state: z.enum(["used", "expired", "pending"]),
  created_by: z.string(),
  created_at: nullableIso,
  expires_at: nullableIso,
  used_at: nullableIso,
  used_by: z.string().nullable(),
});

/** usageSummary (admin/usage-queries.ts). */
export const usageSummarySchema = z.object({
  start: isoTime,
  end: isoTime,
  days: count,
  totals: z.object(summaryShape),
  by_day: z.array(z.object({ day: z.string(), ...summaryShape })),
  by_key: z.array(
    z.object({
      key_id: z.string().nullable(),
      name: z.string().nullable(),
      prefix: z.string().nullable(),
      status: z.string(),
      owner_email: z.string().nullable(),
      ...summaryShape,
    }),
  ),
  by_model: z.array(z.object({ model: z.string(), ...summaryShape })),
  by_tag: tagUsageView,
  by_workspace: workspaceUsageView.describe("Spend per workspace of the keys (workspace_id null: keys in no workspace, or deleted), dearest first"),
  by_member: memberUsageView.describe("Spend per member: the account owning the keys, dearest first"),
});

/** usageAcrossAccounts (admin/usage-queries.ts): every account's usage, by account, model, provider, workspace and tag. */
export const usageAcrossAccountsSchema = z.object({
  start: isoTime,
  end: isoTime,
  days: count,
  totals: z.object(summaryShape),
  by_account: z.array(z.object({ account_id: z.string(), email: z.string().nullable(), ...summaryShape })),
  by_model: z.array(z.object({ model: z.string(), ...summaryShape })),
  by_provider: z.array(z.object({ provider: z.string(), ...summaryShape })),
  by_workspace: workspaceUsageView.describe("Spend per workspace across every account (workspace_id null: keys in no workspace, deleted keys, the operator's own tests)"),
  by_tag: tagUsageView.describe("Spend per tag across every account; a request with several tags counts in each"),
});

/**
 * ledgerRowView (admin/usage-queries.ts): one ledger row, with a count per pricing dimension
 * beyond the base tokens and a cost per dimension (their names come from core/dimensions.ts).
 */
export const ledgerRowViewSchema = z.object({
  id: z.string(),
  created_at: isoTime,
  kind: z.string(),
  key_id: z.string().nullable(),
  key_name: z.string().nullable(),
  workspace_id: z.string().nullable().describe("The key's workspace; null: none, or the key is deleted"),
  request_id: z.string(),
  model: z.string().nullable(),
  provider: z.string().nullable(),
  route: z.string().nullable(),
  ...requestCountsShape,
  note: z.string().nullable(),
  deployment: z.string().nullable(),
  /** The price factor of the account's tier the row was charged at ("1.5"); null: list prices or not a usage row. */
  price_factor: z.string().nullable(),
  tags: z.string().nullable().describe("The request's tags, key=value joined by commas; null: none"),
  // Named at run time, as dimensionFields names them: the view types them only as a record, so
  // test/openapi's real answers (strict) are what checks them.
  ...Object.fromEntries([
    ...DIMENSIONS.flatMap((d) => (d.countColumn !== null && !BASE_COUNT_COLUMNS.has(d.countColumn) ? [[d.countColumn, count]] : [])),
    ...DIMENSIONS.map((d) => [`${d.name}_cost_usd`, usdText]),
    ["cache_saving_usd", usdText],
  ]),
});

const breakerShape = {
  state: z.enum(["closed", "open", "half_open"]),
  cooldown_seconds: count,
  requests: count,
  failures: count,
  error_rate: z.number().nullable(),
  p50_ms: z.number().nullable(),
  window_at: nullableIso,
  state_changed_at: nullableIso,
  last_error: z.string().nullable().describe('The latest upstream error on this key ("HTTP 503", "no response: ...")'),
  last_error_at: nullableIso,
  rate_limit_cooldown_seconds: count.describe("Seconds left of the cooldown after an upstream 429; 0 otherwise"),
};

/** upstreamStatuses (pipeline/upstream-status.ts): fingerprints, never keys. */
export const upstreamStatusesSchema = z.object({
  keys: z.array(
    z.object({
      provider: z.string(),
      account_id: z.string().nullable(),
      account_email: z.string().nullable(),
      upstream_key_id: z.string().nullable(),
      fingerprint: z.string(),
      ...breakerShape,
    }),
  ),
  deployments: z.array(
    z.object({
      deployment: z.string(),
      provider: z.string(),
      ...breakerShape,
      /** Its active health probe (health_check); null without one; ok null until the first probe. */
      probe: z
        .object({
          interval_s: z.number(),
          ok: z.boolean().nullable(),
          status: z.number().int().nullable(),
          latency_ms: z.number().int().nullable(),
          error: z.string().nullable(),
          checked_at: z.string().nullable(),
          failures_in_row: z.number().int(),
        })
        .nullable(),
    }),
  ),
});

const priceView = z.object({ dimension: z.string(), unit: z.enum(["token", "unit"]), counts: z.string(), variant: z.string().nullable(), usd: z.string() });

/** GET /dashboard/api/models (src/dashboard/routes/model-routes.ts). */
export const dashboardModelsSchema = z.object({
  tier: z.string(),
  price_factor: z.string().nullable(),
  key: z.object({ id: z.string(), name: z.string(), prefix: z.string(), allowed_models: z.array(z.string()).nullable() }).nullable(),
  public_url: z.string().nullable(),
  data: z.array(
    z.object({
      id: z.string(),
      kind: z.string(),
      context_window: z.number().int().nullable(),
      max_output_tokens: z.number().int().nullable(),
      modalities: z.object({ input: z.array(z.string()), output: z.array(z.string()) }),
      demo: z.boolean(),
      routing_group: z.boolean(),
      prices: z.array(priceView),
      long_context: z.object({ above_input_tokens: z.number().int(), prices: z.array(priceView) }).nullable(),
    }),
  ),
});

/** One request log row as its account sees it (src/dashboard/routes/request-log-routes.ts). */
export const requestLogViewSchema = z.object({
  request_id: z.string(),
  created_at: z.string(),
  key_id: z.string().nullable(),
  key_name: z.string().nullable(),
  key_prefix: z.string().nullable(),
  method: z.string(),
  route: z.string(),
  model: z.string().nullable(),
  deployment: z.string().nullable(),
  status: z.number().int(),
  error_type: z.string().nullable(),
  error_message: z.string().nullable(),
  requested_model: z.string().nullable(),
  /** Guardrail decisions, "side:guardrail:action" comma-separated; never the text matched. */
  guardrails: z.string().nullable(),
  latency_ms: z.number().nullable(),
  first_byte_ms: z.number().nullable(),
  attempts: z.number().int().nullable(),
  input_tokens: z.number().int().nullable(),
  cached_tokens: z.number().int().nullable(),
  output_tokens: z.number().int().nullable(),
  reasoning_tokens: z.number().int().nullable(),
  cost_usd: z.string().nullable(),
  estimated: z.boolean().nullable(),
});

/** An administrator's request log row: also the account and the provider. */
export const adminRequestLogViewSchema = requestLogViewSchema.extend({ account_id: z.string().nullable(), provider: z.string().nullable() });
