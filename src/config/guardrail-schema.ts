// The config file's `guardrails` section (docs/configuration.md, "Guardrails"); compiled by
// guardrail-settings.ts. Every field is bounded: patterns in count and length, webhook timeouts.
import { z } from "zod";
import { MAX_CUSTOM_PATTERNS, MAX_PATTERN_LENGTH } from "../core/guardrails/matcher.js";

const guardrailName = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "letters, digits and . _ - only");

const customPatternSchema = z.strictObject({
  /** What a mask writes: [REDACTED:<name>]. */
  name: guardrailName,
  pattern: z.string().min(1).max(MAX_PATTERN_LENGTH),
  case_insensitive: z.boolean().default(false),
  /** The longest text a match spans (sizes a stream's holdback window, at most 256). */
  max_length: z.number().int().min(1).max(10_000).optional(),
});

const webhookSchema = z.strictObject({
  url: z.url().max(2048),
  timeout_ms: z.number().int().min(50).max(30_000).default(2_000),
  /** Sent with every call, e.g. `authorization: Bearer ${MODERATOR_TOKEN}`. */
  headers: z
    .record(z.string().min(1).max(100), z.string().max(4096))
    .refine((headers) => Object.keys(headers).length <= 16, "at most 16 headers")
    .default({}),
});

export const guardrailSchema = z.strictObject({
  name: guardrailName,
  kind: z.enum(["builtin", "regex", "webhook"]),
  /** builtin: pattern ids or groups (secrets, personal_data); regex: named patterns. */
  patterns: z
    .array(z.union([z.string().min(1).max(40), customPatternSchema]))
    .max(MAX_CUSTOM_PATTERNS)
    .default([]),
  webhook: webhookSchema.optional(),
  applies_to: z
    .array(z.enum(["request", "response"]))
    .min(1)
    .max(2)
    .default(["request"]),
  mode: z.enum(["block", "mask", "log"]).default("block"),
  /** all: every request; selected: only the requests of a key or workspace that lists it. */
  applies: z.enum(["all", "selected"]).default("all"),
  /** Shown where keys and workspaces pick guardrails (the dashboard). */
  description: z.string().max(200).default(""),
  on_failure: z.enum(["closed", "open"]).default("closed"),
});

export const guardrailsSectionSchema = z.array(guardrailSchema).max(32).default([]);

export type GuardrailFileEntry = z.infer<typeof guardrailSchema>;
