// Field readers shared by the client formats; each names the field it rejects.
import type { z } from "zod";
import type { ModelConfig } from "../core/catalog.js";
import { MAX_OUTPUT_TOKENS_CEILING } from "../core/usage.js";
import { invalidRequest } from "../errors/catalogue.js";
import type { OutputTokenField } from "../upstreams/plan.js";

/** `messages[0].role` for the path ["messages", 0, "role"]: how refusals name a field. */
export function fieldName(path: readonly PropertyKey[]): string {
  return path.map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`)).join("");
}

/** Checks a request body with its schema (request-schemas.ts); the first problem is a 400 naming its field. */
export function checkRequestBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.length > 0 ? fieldName(issue.path) : "body";
  // The message names the field too: Anthropic's error shape has no param.
  throw invalidRequest(field, issue.message.startsWith(field) || field === "body" ? issue.message : `${field}: ${issue.message}`);
}

export function readModelField(body: Record<string, unknown>): string {
  if (typeof body.model !== "string" || body.model.trim() === "") throw invalidRequest("model", "model is required and must be a string.");
  return body.model;
}

export function readStreamFlag(body: Record<string, unknown>): boolean {
  if (body.stream === undefined || body.stream === null) return false;
  if (typeof body.stream !== "boolean") throw invalidRequest("stream", "stream must be true or false.");
  return body.stream;
}

export function readOptionalPositiveInt(body: Record<string, unknown>, field: string): number | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) throw invalidRequest(field, `${field} must be a positive integer.`);
  return value;
}

/**
 * The output-token limits the client set (max_tokens or its equivalents, in order of precedence),
 * each a positive integer; checkOutputTokenLimits() bounds them once the model is known. The first
 * one set is what admission holds.
 */
export function readOutputTokens(body: Record<string, unknown>, fields: readonly string[]): { maxOutputTokens: number | null; outputTokenFields: OutputTokenField[] } {
  const outputTokenFields: OutputTokenField[] = [];
  for (const field of fields) {
    const value = readOptionalPositiveInt(body, field);
    if (value !== null) outputTokenFields.push({ field, value });
  }
  return { maxOutputTokens: outputTokenFields[0]?.value ?? null, outputTokenFields };
}

/** The most output a request to this model may ask for: its max_output_tokens, else the global ceiling. */
export function outputTokenLimit(model: ModelConfig): number {
  return model.maxOutputTokens ?? MAX_OUTPUT_TOKENS_CEILING;
}

/**
 * Refuses an output-token limit above the model's: such a request cannot be served as asked, and its
 * projected cost (1e30 tokens) would not fit the database's 64-bit integers.
 */
export function checkOutputTokenLimits(fields: readonly OutputTokenField[], model: ModelConfig): void {
  const limit = outputTokenLimit(model);
  for (const { field, value } of fields) {
    if (value > limit) throw invalidRequest(field, `${field} must be at most ${limit} for the model ${model.id}.`);
  }
}

/**
 * The body with its output-token limit lowered to `outputTokens` (clamping): every limit field in
 * `fields` the client set, else `fallback`. The plans carry it into each upstream's own field.
 */
export function withOutputLimit(body: Record<string, unknown>, fields: readonly string[], fallback: string, outputTokens: number): Record<string, unknown> {
  const limited = { ...body };
  const set = fields.filter((field) => body[field] !== undefined && body[field] !== null);
  for (const field of set.length > 0 ? set : [fallback]) limited[field] = outputTokens;
  return limited;
}
