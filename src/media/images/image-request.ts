// POST /v1/images/generations request checks (OpenAI Images). Every failure names its field; fields
// the gateway does not know are passed on untouched, so newer upstream options keep working.
import { z } from "zod";
import { invalidRequest } from "../../errors/catalogue.js";
import { checkRequestBody } from "../../formats/fields.js";

export interface ImageRequest {
  model: string;
  prompt: string;
  n: number;
  size: string | null;
  quality: string | null;
  /** The client's body, to forward with the upstream model id swapped in. */
  body: Record<string, unknown>;
}

const QUALITIES = ["auto", "low", "medium", "high", "standard", "hd"] as const;
const RESPONSE_FORMATS = ["url", "b64_json"] as const;
const OUTPUT_FORMATS = ["png", "jpeg", "webp"] as const;
const BACKGROUNDS = ["transparent", "opaque", "auto"] as const;
export const MAX_IMAGES = 10;

const optionalOneOf = (field: string, allowed: readonly [string, ...string[]]) =>
  z
    .enum(allowed, { error: `${field} must be one of ${allowed.join(", ")}.` })
    .nullable()
    .optional();

/**
 * The body as the gateway checks it; the OpenAPI document describes the route from it (src/openapi).
 * Fields it does not name pass on to the upstream untouched.
 */
export const imageRequestSchema = z.looseObject({
  model: z.string({ error: "model is required and must be a string." }).min(1, "model is required and must be a string."),
  prompt: z.string({ error: "prompt is required and must be a non-empty string." }).refine((text) => text.trim() !== "", "prompt is required and must be a non-empty string."),
  n: z
    .number({ error: `n must be an integer from 1 to ${MAX_IMAGES}.` })
    .int(`n must be an integer from 1 to ${MAX_IMAGES}.`)
    .min(1, `n must be an integer from 1 to ${MAX_IMAGES}.`)
    .max(MAX_IMAGES, `n must be an integer from 1 to ${MAX_IMAGES}.`)
    .nullable()
    .optional(),
  size: z
    .string({ error: "size must be a string." })
    .regex(/^(auto|[1-9]\d{1,4}x[1-9]\d{1,4})$/, 'size must be "auto" or WIDTHxHEIGHT, for example "1024x1024".')
    .nullable()
    .optional(),
  quality: optionalOneOf("quality", QUALITIES),
  response_format: optionalOneOf("response_format", RESPONSE_FORMATS),
  output_format: optionalOneOf("output_format", OUTPUT_FORMATS),
  background: optionalOneOf("background", BACKGROUNDS),
  output_compression: z
    .number({ error: "output_compression must be an integer from 0 to 100." })
    .int("output_compression must be an integer from 0 to 100.")
    .min(0, "output_compression must be an integer from 0 to 100.")
    .max(100, "output_compression must be an integer from 0 to 100.")
    .nullable()
    .optional(),
  // Partial-image events would need their own relay and metering; one buffered answer is supported.
  stream: z.literal(false, { error: "Streaming image generation is not supported; omit stream." }).nullable().optional(),
});

export function parseImageRequest(raw: unknown): ImageRequest {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw invalidRequest("body", "The request body must be a JSON object.");
  const body = raw as Record<string, unknown>;
  const checked = checkRequestBody(imageRequestSchema, body);
  return { model: checked.model, prompt: checked.prompt, n: checked.n ?? 1, size: checked.size ?? null, quality: checked.quality ?? null, body };
}

/** The pricing key of a request: "SIZE/QUALITY", missing parts as "auto" (pricing falls back to SIZE, then "default"). */
export function imageVariant(request: ImageRequest): string {
  return `${request.size ?? "auto"}/${request.quality ?? "auto"}`;
}
