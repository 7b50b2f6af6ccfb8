// What the gateway answers, as zod schemas: the OpenAPI document's response schemas (document.ts)
// and, in test/openapi, the check of real responses against them. The gateway's own JSON (views,
// lists, errors) is described strictly (no unknown fields); the model routes' answers follow the
// upstream's wire format, so only the fields the gateway promises are required and others pass.
import { z } from "zod";
import { ERROR_CATALOGUE, type ErrorType } from "../errors/catalogue.js";
import { subjectLimitsSchema } from "../billing/traffic-limits.js";
import { BASE_COUNT_COLUMNS, DIMENSIONS } from "../billing/dimensions.js";

export const usdText = z
  .string()
  .regex(/^-?\d+(\.\d+)?$/)
  .describe("USD as an exact decimal string");
const isoTime = z.string().describe("ISO 8601 date-time, UTC");
const nullableIso = isoTime.nullable();
const count = z.number().int();

const ERROR_TYPES = Object.keys(ERROR_CATALOGUE) as [ErrorType, ...ErrorType[]];

/** The OpenAI-shaped error (every route family but /v1/messages): renderError in errors/catalogue.ts. */
export const openAiErrorSchema = z.object({
  error: z.object({ message: z.string(), type: z.enum(ERROR_TYPES), param: z.string().nullable(), code: z.string() }),
  request_id: z.string(),
});

/** The Anthropic-shaped error of /v1/messages (and Anthropic-style /v1/models calls). */
export const anthropicErrorSchema = z.object({ type: z.literal("error"), error: z.object({ type: z.enum(ERROR_TYPES), message: z.string() }), request_id: z.string() });

export const subjectLimitsView = subjectLimitsSchema.nullable();

const periodicBudgetView = z.object({
  period: z.enum(["day", "week", "month"]),
  budget_usd: usdText.nullable(),
  token_cap: count.nullable(),
  spent_usd: usdText,
  tokens_used: count,
  period_start: isoTime,
  resets_at: isoTime,
});

/** keyPolicyJson (accounts/key-policy.ts). */
export const keyPolicyView = z.object({
  allowed_models: z.array(z.string()).nullable(),
  allowed_networks: z.array(z.string()).nullable(),
  expires_at: nullableIso,
  expired: z.boolean(),
  periodic_budget: periodicBudgetView.nullable(),
});

const accountStatus = z.enum(["active", "suspended", "closed"]);

/** accountView (dashboard/views.ts). */
export const accountViewSchema = z.object({
  id: z.string(),
  email: z.string(),
  status: accountStatus,
  is_admin: z.boolean(),
  tier: z.string(),
  balance_usd: usdText,
  total_spent_usd: usdText,
  clamp_output: z.boolean(),
  limits: subjectLimitsView,
  created_at: nullableIso,
});

/** adminAccountView (admin/views.ts). */
export const adminAccountViewSchema = accountViewSchema.extend({
  held_usd: usdText,
  monthly_budget_usd: usdText.nullable(),
  monthly_token_budget: count.nullable(),
  default_model: z.string().nullable(),
});

/** keyView (dashboard/views.ts). */
export const keyViewSchema = z.object({
  id: z.string(),
  account_id: z.string(),
  workspace_id: z.string().nullable(),
  name: z.string(),
  prefix: z.string(),
  status: z.string(),
  effective_status: z.string(),
  budget_cap_usd: usdText.nullable(),
  spent_usd: usdText,
  token_cap: count.nullable(),
  tokens_used: count,
  clamp_output: z.boolean(),
  policy: keyPolicyView,
  limits: subjectLimitsView,
  created_at: nullableIso,
  revoked_at: nullableIso,
  last_used_at: nullableIso,
});

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

export const providerKeyViewSchema = z.object({ id: z.string(), account_id: z.string(), provider: z.string(), label: z.string(), last4: z.string(), created_at: nullableIso });

export const auditViewSchema = z.object({
  id: z.string(),
  created_at: nullableIso,
  actor: z.looseObject({ type: z.string() }),
  action: z.string(),
  target: z.object({ type: z.string(), id: z.string().nullable() }),
  before: z.unknown(),
  after: z.unknown(),
  client_address: z.string().nullable(),
  request_id: z.string().nullable(),
});

/** usageTotalsJson (billing/usage-report.ts): counts, cost, per pricing dimension and the cache summary. */
const usageTotalsShape = {
  requests: count,
  input_tokens: count,
  output_tokens: count,
  cached_tokens: count,
  reasoning_tokens: count,
  cost_usd: usdText,
  dimensions: z.record(z.string(), z.record(z.string(), z.union([z.number(), z.string()]))),
  cache: z.object({
    read_tokens: count,
    read_cost_usd: usdText,
    write_tokens: count,
    write_cost_usd: usdText,
    hit_ratio: z
      .string()
      .regex(/^\d+\.\d{6}$/)
      .nullable()
      .describe("cached input tokens / input tokens, six decimals; null without input"),
    saving_usd: usdText,
  }),
};
export const usageTotalsSchema = z.object(usageTotalsShape);

/** A row of usageSummary: the totals and their input plus output tokens. */
const summaryShape = { ...usageTotalsShape, tokens: count };

/** usageSummary (dashboard/usage-queries.ts). */
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
});

/** usageAcrossAccounts (dashboard/usage-queries.ts): every account's usage, by account, model and provider. */
export const usageAcrossAccountsSchema = z.object({
  start: isoTime,
  end: isoTime,
  days: count,
  totals: z.object(summaryShape),
  by_account: z.array(z.object({ account_id: z.string(), email: z.string().nullable(), ...summaryShape })),
  by_model: z.array(z.object({ model: z.string(), ...summaryShape })),
  by_provider: z.array(z.object({ provider: z.string(), ...summaryShape })),
});

/** trafficUse (billing/traffic-usage.ts): each limit that applies, with the current window's use. */
export const trafficUseSchema = z.array(
  z.object({
    subject: z.enum(["key", "account"]),
    model: z.string().nullable(),
    requests_per_minute: count.nullable(),
    tokens_per_minute: count.nullable(),
    concurrent_requests: count.nullable(),
    requests: count,
    tokens: count,
    in_flight: count,
    resets_at: nullableIso,
  }),
);

/** A cursor page of the admin API. */
export function adminPage<T extends z.ZodType>(item: T) {
  return z.object({ object: z.literal("list"), data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });
}

export const deletedSchema = z.object({ id: z.string(), deleted: z.literal(true) });

/** codeView (admin/views.ts): a redemption code as lists show it, never its text. */
export const codeViewSchema = z.object({
  id: z.string(),
  prefix: z.string(),
  value_usd: usdText,
  batch: z.string().nullable(),
  note: z.string().nullable(),
  state: z.enum(["unused", "used", "revoked", "expired"]),
  created_by: z.string().nullable(),
  created_at: nullableIso,
  expires_at: nullableIso,
  used_at: nullableIso,
  used_by: z.string().nullable(),
  revoked_at: nullableIso,
});

/** mintFromBody (admin/routes/codes.ts): the minted codes, each with its text (shown only here). */
export const mintedCodesSchema = z.object({
  object: z.literal("list"),
  data: z.array(codeViewSchema.extend({ code: z.string().describe("The code to hand out; stored only as a hash, never shown again") })),
});

/**
 * ledgerRowView (dashboard/usage-queries.ts): one ledger row, with a count per pricing dimension
 * beyond the base tokens and a cost per dimension (their names come from billing/dimensions.ts).
 */
export const ledgerRowViewSchema = z.object({
  id: z.string(),
  created_at: isoTime,
  kind: z.string(),
  key_id: z.string().nullable(),
  key_name: z.string().nullable(),
  request_id: z.string(),
  model: z.string().nullable(),
  provider: z.string().nullable(),
  route: z.string().nullable(),
  input_tokens: count,
  cached_tokens: count,
  output_tokens: count,
  reasoning_tokens: count,
  cost_usd: usdText,
  estimated: z.boolean(),
  note: z.string().nullable(),
  deployment: z.string().nullable(),
  // Named at run time, as dimensionFields names them: the view types them only as a record, so
  // test/openapi's real answers (strict) are what checks them.
  ...Object.fromEntries([
    ...DIMENSIONS.flatMap((d) => (d.countColumn !== null && !BASE_COUNT_COLUMNS.has(d.countColumn) ? [[d.countColumn, count]] : [])),
    ...DIMENSIONS.map((d) => [`${d.name}_cost_usd`, usdText]),
    ["cache_saving_usd", usdText],
  ]),
});

// ---- /v1 (the gateway's own JSON) ----

export const requestRecordSchema = z.object({
  object: z.literal("request"),
  id: z.string(),
  created_at: isoTime,
  model: z.string().nullable(),
  route: z.string().nullable(),
  deployment: z.string().nullable(),
  input_tokens: count,
  cached_tokens: count,
  output_tokens: count,
  reasoning_tokens: count,
  cost_usd: usdText,
  estimated: z.boolean(),
  attempts: count.nullable(),
  dimensions: usageTotalsShape.dimensions,
  cache: usageTotalsShape.cache,
});

export const meSchema = z.object({
  object: z.literal("account"),
  id: z.string(),
  email: z.string(),
  status: accountStatus,
  tier: z.string(),
  default_model: z.string().nullable(),
  balance_usd: usdText,
  held_usd: usdText,
  available_usd: usdText,
  total_spent_usd: usdText,
  monthly_budget: z.object({
    usd: usdText.nullable(),
    tokens: count.nullable(),
    month: z.string(),
    spent_usd: usdText,
    tokens_used: count,
    requests: count,
    resets_at: isoTime,
  }),
  key: z.object({ id: z.string(), name: z.string(), prefix: z.string(), status: z.string(), effective_status: z.string(), clamp_output: z.boolean(), policy: keyPolicyView }),
  limits: z.object({ key: subjectLimitsView, account: subjectLimitsView, applied: trafficUseSchema }),
  clamp_output: z.boolean(),
  key_usage: z.object({ month: z.string(), ...usageTotalsShape, by_model: z.array(z.object({ model: z.string(), ...usageTotalsShape })) }),
});

export const keyUsageSchema = z.object({
  object: z.literal("usage"),
  key_id: z.string(),
  start: isoTime,
  end: isoTime,
  totals: usageTotalsSchema,
  by_model: z.array(z.object({ model: z.string(), ...usageTotalsShape })),
  by_day: z.array(z.object({ day: z.string(), ...usageTotalsShape })),
});

const openAiModel = z.object({ id: z.string(), object: z.literal("model"), created: count, owned_by: z.string(), demo: z.literal(true).optional() });
const anthropicModel = z.object({ type: z.literal("model"), id: z.string(), display_name: z.string(), created_at: isoTime });
export const modelListSchema = z.union([
  z.object({ object: z.literal("list"), data: z.array(openAiModel) }),
  z.object({ data: z.array(anthropicModel), has_more: z.boolean(), first_id: z.string().nullable(), last_id: z.string().nullable() }),
]);
export const modelSchema = z.union([openAiModel, anthropicModel]);

export const catalogSchema = z.object({
  object: z.literal("catalog"),
  data: z.array(
    z.looseObject({
      id: z.string(),
      kind: z.string(),
      context_window: count.nullable(),
      max_output_tokens: count.nullable(),
      modalities: z.unknown(),
      pricing: z.looseObject({ input_per_token: z.string(), output_per_token: z.string() }),
      tiers: z.array(z.string()),
      demo: z.literal(true).optional(),
    }),
  ),
  compatibility: z.looseObject({}).nullable(),
});

// ---- /v1 model routes: the upstream wire formats, the fields the gateway promises ----

const openAiUsage = z.looseObject({ prompt_tokens: count, completion_tokens: count, total_tokens: count });

export const chatCompletionSchema = z.looseObject({
  id: z.string(),
  object: z.literal("chat.completion"),
  created: count,
  model: z.string(),
  choices: z.array(z.looseObject({ index: count, message: z.looseObject({ role: z.literal("assistant") }), finish_reason: z.string().nullable() })),
  usage: openAiUsage.optional(),
});

export const messageSchema = z.looseObject({
  id: z.string(),
  type: z.literal("message"),
  role: z.literal("assistant"),
  model: z.string(),
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: z.string().nullable(),
  usage: z.looseObject({ input_tokens: count, output_tokens: count }),
});

export const countTokensSchema = z.looseObject({ input_tokens: count });

export const responseObjectSchema = z.looseObject({
  id: z.string(),
  object: z.literal("response"),
  created_at: z.number(),
  model: z.string(),
  status: z.string(),
  output: z.array(z.looseObject({ type: z.string() })),
  usage: z.looseObject({ input_tokens: count, output_tokens: count }).nullable().optional(),
});

export const embeddingListSchema = z.looseObject({
  object: z.literal("list"),
  data: z.array(z.looseObject({ object: z.literal("embedding"), index: count, embedding: z.union([z.array(z.number()), z.string()]) })),
  model: z.string(),
  usage: z.looseObject({ prompt_tokens: count, total_tokens: count }),
});

export const imagesResponseSchema = z.looseObject({
  created: count,
  data: z.array(z.looseObject({ url: z.string().optional(), b64_json: z.string().optional() })),
});

/** videoObject (media/videos/video-object.ts): built from the gateway's own row, so strict. */
export const videoSchema = z.object({
  id: z.string(),
  object: z.literal("video"),
  model: z.string(),
  status: z.enum(["queued", "in_progress", "completed", "failed"]),
  progress: z.number(),
  created_at: count,
  completed_at: count.nullable(),
  expires_at: count.nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  seconds: z.string().nullable(),
  size: z.string().nullable(),
  prompt: z.null(),
  remixed_from_video_id: z.null(),
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

/** upstreamStatuses (upstreams/health/upstream-status.ts): fingerprints, never keys. */
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
  deployments: z.array(z.object({ deployment: z.string(), provider: z.string(), ...breakerShape })),
});
/** A text/event-stream answer (stream: true): the format's events, one `data:` line each. */
export const eventStreamSchema = z.string().describe("Server-sent events in the route's native streaming format");

/** The serving config's version and load time (/readyz, decision 0021). */
export const configVersionSchema = z.object({ version: z.string(), loaded_at: z.string() });

/** POST /admin/v1/config/reload when not refused (src/admin/routes/config.ts, reloadView). */
export const configReloadSchema = z.object({
  object: z.literal("config.reload"),
  status: z.enum(["reloaded", "unchanged"]),
  version: z.string(),
  loaded_at: z.string(),
  previous_version: z.string().optional(),
  changes: z
    .object({
      models_added: z.array(z.string()),
      models_removed: z.array(z.string()),
      models_changed: z.array(z.string()),
      providers_added: z.array(z.string()),
      providers_removed: z.array(z.string()),
      providers_changed: z.array(z.string()),
    })
    .optional(),
});

const priceView = z.object({ dimension: z.string(), unit: z.enum(["token", "unit"]), counts: z.string(), variant: z.string().nullable(), usd: z.string() });

/** GET /dashboard/api/models (src/dashboard/routes/model-routes.ts). */
export const dashboardModelsSchema = z.object({
  tier: z.string(),
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
