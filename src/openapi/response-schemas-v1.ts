// The /v1 response schemas: the gateway's own JSON (request record, /v1/me, usage, models,
// catalogue) and, for the model routes, the upstream wire formats' fields the gateway promises.
import { z } from "zod";
import { usdText, isoTime, count, accountStatus, usageTotalsShape, requestCountsShape, budgetUseView, tagUsageView } from "./response-schema-parts.js";
import { subjectLimitsView, keyPolicyView, usageTotalsSchema, trafficUseSchema } from "./response-schemas-common.js";

// ---- /v1 (the gateway's own JSON) ----

export const requestRecordSchema = z.object({
  object: z.literal("request"),
  id: z.string(),
  created_at: isoTime,
  model: z.string().nullable(),
  route: z.string().nullable(),
  deployment: z.string().nullable(),
  ...requestCountsShape,
  attempts: count.nullable(),
  /** The price factor of the account's tier the request was charged at ("1.5"); null: list prices. */
  price_factor: z.string().nullable(),
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
  workspace: z
    .object({
      id: z.string(),
      name: z.string(),
      allowed_models: z.array(z.string()).nullable(),
      month: z.string(),
      resets_at: isoTime,
      budget: budgetUseView,
      member_budget: budgetUseView,
    })
    .nullable()
    .describe("The workspace the key is tagged with: its allowed models, its monthly budget and the caller's member budget, with what is left; null without one."),
  budgets: z
    .array(
      budgetUseView.extend({
        level: z.enum(["account", "key", "key_period", "workspace", "member", "tag"]),
        code: z.string(),
        resets_at: isoTime.nullable(),
        tag: z.string().optional().describe("level tag: the budget's tag (key=value), one of the key's default tags"),
      }),
    )
    .describe(
      "Every budget with a limit that applies to this key, in the order admission judges them, with what is left of each; code: the 402 refusal when it runs out; resets_at null: the key's lifetime caps.",
    ),
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
  by_tag: tagUsageView.describe("Spend per tag of the key's requests in the window, dearest first; a request with several tags counts in each"),
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
