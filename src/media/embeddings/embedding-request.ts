// POST /v1/embeddings request checks (OpenAI Embeddings). Every field is checked and bounded, and a
// failure names it; a field the API does not have is refused too (the upstream would refuse it),
// so the body sent upstream is built from checked values only.
import { estimateTextTokens } from "../../billing/estimate-tokens.js";
import { z } from "zod";
import { invalidRequest } from "../../errors/catalogue.js";
import type { EmbeddingInput, EmbeddingRequest } from "../../upstreams/embedding-request.js";
import { checkRequestBody } from "../../formats/fields.js";

/** OpenAI's own limit of inputs in one request. */
export const MAX_EMBEDDING_INPUTS = 2_048;
/** Characters of one text input: 4x the 32k-token context of the longest embedding models. */
export const MAX_EMBEDDING_INPUT_CHARS = 131_072;
/** Token ids of one token-array input. */
export const MAX_EMBEDDING_INPUT_TOKENS = 32_768;
/** Larger than any tokenizer's vocabulary. */
export const MAX_TOKEN_ID = 10_000_000;
/** Estimated tokens of all inputs together (OpenAI allows 300k per request). */
export const MAX_EMBEDDING_TOTAL_TOKENS = 1_000_000;
/** Output dimensions (3072 for text-embedding-3-large; a few models go to 8192). */
export const MAX_EMBEDDING_DIMENSIONS = 16_384;
export const MAX_USER_CHARS = 512;

const FIELDS = ["model", "input", "dimensions", "encoding_format", "user"];
const DIMENSIONS_MESSAGE = `dimensions must be an integer from 1 to ${MAX_EMBEDDING_DIMENSIONS}.`;

const INPUT_SHAPE = "input must be a non-empty string, an array of non-empty strings, an array of token ids, or an array of token-id arrays.";
const text = z.string({ error: INPUT_SHAPE }).min(1, "must not be empty.").max(MAX_EMBEDDING_INPUT_CHARS, `is longer than ${MAX_EMBEDDING_INPUT_CHARS} characters.`);
const tokenIdArray = z
  .array(z.number().int().min(0).max(MAX_TOKEN_ID), { error: INPUT_SHAPE })
  .min(1, INPUT_SHAPE)
  .max(MAX_EMBEDDING_INPUT_TOKENS, `holds more than ${MAX_EMBEDDING_INPUT_TOKENS} token ids.`);

/**
 * The body, checked before anything else; the OpenAPI document describes the route from it
 * (src/openapi). The total-token bound across inputs is parseInput's, below.
 */
export const embeddingRequestSchema = z.strictObject({
  model: z.string({ error: "model is required and must be a string." }).min(1, "model is required and must be a string."),
  input: z.union([text, z.array(text).min(1).max(MAX_EMBEDDING_INPUTS), tokenIdArray, z.array(tokenIdArray).min(1).max(MAX_EMBEDDING_INPUTS)], { error: INPUT_SHAPE }),
  dimensions: z.number({ error: DIMENSIONS_MESSAGE }).int(DIMENSIONS_MESSAGE).min(1, DIMENSIONS_MESSAGE).max(MAX_EMBEDDING_DIMENSIONS, DIMENSIONS_MESSAGE).nullable().optional(),
  encoding_format: z.enum(["float", "base64"], { error: 'encoding_format must be "float" or "base64".' }).nullable().optional(),
  user: z
    .string({ error: `user must be a string of at most ${MAX_USER_CHARS} characters.` })
    .max(MAX_USER_CHARS, `user must be a string of at most ${MAX_USER_CHARS} characters.`)
    .nullable()
    .optional(),
});

export function parseEmbeddingRequest(raw: unknown): EmbeddingRequest {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw invalidRequest("body", "The request body must be a JSON object.");
  const body = raw as Record<string, unknown>;
  for (const field of Object.keys(body)) if (!FIELDS.includes(field)) throw invalidRequest(field, `Unknown field ${field}; an embeddings request has ${FIELDS.join(", ")}.`);
  // Input first: its refusals name the very item (input[3]).
  const { input, inputCount, projectedTokens } = parseInput(body.input);
  const checked = checkRequestBody(embeddingRequestSchema, body);
  const model = checked.model;
  const dimensions = checked.dimensions ?? null;
  // OpenAI's default is float.
  const encodingFormat = checked.encoding_format ?? "float";
  const user = checked.user ?? null;
  return { model, input, inputCount, projectedTokens, dimensions, encodingFormat, user, inputHints: null };
}

function parseInput(input: unknown): { input: EmbeddingInput; inputCount: number; projectedTokens: number } {
  if (typeof input === "string") return { input, inputCount: 1, projectedTokens: textTokens(input, "input") };
  if (!Array.isArray(input) || input.length === 0) throw invalidRequest("input", INPUT_SHAPE);
  const items: unknown[] = input;
  const first = items[0];
  if (typeof first === "number") return { input: tokenIds(items, "input"), inputCount: 1, projectedTokens: items.length };
  if (items.length > MAX_EMBEDDING_INPUTS) throw invalidRequest("input", `input holds at most ${MAX_EMBEDDING_INPUTS} items.`);
  let projectedTokens = 0;
  if (typeof first === "string") {
    items.forEach((item, i) => {
      if (typeof item !== "string") throw invalidRequest(`input[${i}]`, INPUT_SHAPE);
      projectedTokens += textTokens(item, `input[${i}]`);
    });
  } else if (Array.isArray(first)) {
    items.forEach((item, i) => {
      projectedTokens += tokenIds(item, `input[${i}]`).length;
    });
  } else {
    throw invalidRequest("input[0]", INPUT_SHAPE);
  }
  if (projectedTokens > MAX_EMBEDDING_TOTAL_TOKENS) throw invalidRequest("input", `input holds more than ${MAX_EMBEDDING_TOTAL_TOKENS} tokens.`);
  return { input: items as string[] | number[][], inputCount: items.length, projectedTokens };
}

function textTokens(text: string, field: string): number {
  if (text === "") throw invalidRequest(field, `${field} must not be empty.`);
  if (text.length > MAX_EMBEDDING_INPUT_CHARS) throw invalidRequest(field, `${field} is longer than ${MAX_EMBEDDING_INPUT_CHARS} characters.`);
  return estimateTextTokens(text);
}

function tokenIds(value: unknown, field: string): number[] {
  if (!Array.isArray(value) || value.length === 0) throw invalidRequest(field, INPUT_SHAPE);
  if (value.length > MAX_EMBEDDING_INPUT_TOKENS) throw invalidRequest(field, `${field} holds more than ${MAX_EMBEDDING_INPUT_TOKENS} token ids.`);
  for (const id of value) {
    if (typeof id !== "number" || !Number.isInteger(id) || id < 0 || id > MAX_TOKEN_ID)
      throw invalidRequest(field, `${field} must hold token ids: integers from 0 to ${MAX_TOKEN_ID}.`);
  }
  return value as number[];
}
