// The response schemas every route family shares: the two error envelopes, the account and key
// views with their policy and limits, usage totals and the traffic limits in use.
import { z } from "zod";
import { ERROR_CATALOGUE, type ErrorType } from "../errors/catalogue.js";
import { subjectLimitsSchema } from "../core/traffic-limits.js";
import { usdText, isoTime, nullableIso, count, accountStatus, usageTotalsShape } from "./response-schema-parts.js";

const ERROR_TYPES = Object.keys(ERROR_CATALOGUE) as [ErrorType, ...ErrorType[]];

/** The OpenAI-shaped error (every route family but /v1/messages): renderError in errors/catalogue.ts. */
export const openAiErrorSchema = z.object({
  error: z.object({ message: z.string(), type: z.enum(ERROR_TYPES), param: z.string().nullable(), code: z.string() }),
  request_id: z.string(),
});

/** The Anthropic-shaped error of /v1/messages (and Anthropic-style /v1/models calls). */
export const anthropicErrorSchema = z.object({ type: z.literal("error"), error: z.object({ type: z.enum(ERROR_TYPES), message: z.string() }), request_id: z.string() });

/** Google's error (google.rpc.Status) of /v1beta: the gateway's type in the ErrorInfo detail (renderError, shape "google"). */
export const googleErrorSchema = z.object({
  error: z.object({
    code: z.number().int(),
    message: z.string(),
    status: z.string(),
    details: z.array(
      z.object({
        "@type": z.literal("type.googleapis.com/google.rpc.ErrorInfo"),
        reason: z.string(),
        domain: z.literal("model-gateway"),
        metadata: z.object({ type: z.enum(ERROR_TYPES), param: z.string().optional(), code: z.string().optional(), request_id: z.string() }),
      }),
    ),
  }),
});

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
  allowed_mcp: z.array(z.string()).nullable(),
  expires_at: nullableIso,
  expired: z.boolean(),
  periodic_budget: periodicBudgetView.nullable(),
  guardrails: z.array(z.string()),
  default_tags: z.record(z.string(), z.string()).nullable(),
});

/** accountView (admin/account-views.ts). */
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

/** keyView (admin/account-views.ts). */
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

export const usageTotalsSchema = z.object(usageTotalsShape);

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

export const deletedSchema = z.object({ id: z.string(), deleted: z.literal(true) });

/** A text/event-stream answer (stream: true): the format's events, one `data:` line each. */
export const eventStreamSchema = z.string().describe("Server-sent events in the route's native streaming format");

/** The serving config's version and load time (/readyz, decision 0021). */
export const configVersionSchema = z.object({ version: z.string(), loaded_at: z.string() });
