// The building blocks of the response schemas (response-schemas*.ts): the scalar formats (USD
// text, ISO time, integer counts) and the usage-totals shapes several views spread into theirs.
// Internal to src/openapi: response-schemas.ts re-exports only usdText.
import { z } from "zod";

export const usdText = z
  .string()
  .regex(/^-?\d+(\.\d+)?$/)
  .describe("USD as an exact decimal string");
export const isoTime = z.string().describe("ISO 8601 date-time, UTC");
export const nullableIso = isoTime.nullable();
export const count = z.number().int();

export const accountStatus = z.enum(["active", "suspended", "closed"]);

/** One request's token counts and cost as its ledger row has them (request records, ledger rows). */
export const requestCountsShape = {
  input_tokens: count,
  cached_tokens: count,
  output_tokens: count,
  reasoning_tokens: count,
  cost_usd: usdText,
  estimated: z.boolean(),
};

/** usageTotalsJson (billing/usage-report.ts): counts, cost, per pricing dimension and the cache summary. */
export const usageTotalsShape = {
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

/** A row of usageSummary: the totals and their input plus output tokens. */
export const summaryShape = { ...usageTotalsShape, tokens: count };

/** A budget scope's limits and use this month (billing/budget-view.ts, budgetUseJson). */
export const budgetUseView = z.object({
  usd: usdText.nullable(),
  tokens: count.nullable(),
  spent_usd: usdText,
  tokens_used: count,
  held_usd: usdText,
  held_tokens: count,
  remaining_usd: usdText.nullable(),
  remaining_tokens: count.nullable(),
});

/** tagUsage (billing/tag-usage.ts): spend per tag, dearest first; a row with several tags counts in each. */
export const tagUsageView = z.array(z.object({ tag: z.string(), requests: count, cost_usd: usdText, tokens: count }));
