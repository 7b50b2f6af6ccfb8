// POST /v1/images/generations request checks (OpenAI Images). Every failure names its field; fields
// the gateway does not know are passed on untouched, so newer upstream options keep working.
import { invalidRequest } from "../../errors/catalogue.js";

export interface ImageRequest {
  model: string;
  prompt: string;
  n: number;
  size: string | null;
  quality: string | null;
  /** The client's body, to forward with the upstream model id swapped in. */
  body: Record<string, unknown>;
}

const QUALITIES = ["auto", "low", "medium", "high", "standard", "hd"];
const RESPONSE_FORMATS = ["url", "b64_json"];
const OUTPUT_FORMATS = ["png", "jpeg", "webp"];
const BACKGROUNDS = ["transparent", "opaque", "auto"];
export const MAX_IMAGES = 10;

export function parseImageRequest(raw: unknown): ImageRequest {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw invalidRequest("body", "The request body must be a JSON object.");
  const body = raw as Record<string, unknown>;
  const model = body.model;
  if (typeof model !== "string" || model === "") throw invalidRequest("model", "model is required and must be a string.");
  const prompt = body.prompt;
  if (typeof prompt !== "string" || prompt.trim() === "") throw invalidRequest("prompt", "prompt is required and must be a non-empty string.");

  let n = 1;
  if (body.n !== undefined && body.n !== null) {
    if (typeof body.n !== "number" || !Number.isInteger(body.n) || body.n < 1 || body.n > MAX_IMAGES) {
      throw invalidRequest("n", `n must be an integer from 1 to ${MAX_IMAGES}.`);
    }
    n = body.n;
  }
  const size = optionalString(body, "size");
  if (size !== null && size !== "auto" && !/^[1-9]\d{1,4}x[1-9]\d{1,4}$/.test(size)) {
    throw invalidRequest("size", 'size must be "auto" or WIDTHxHEIGHT, for example "1024x1024".');
  }
  const quality = oneOf(body, "quality", QUALITIES);
  oneOf(body, "response_format", RESPONSE_FORMATS);
  oneOf(body, "output_format", OUTPUT_FORMATS);
  oneOf(body, "background", BACKGROUNDS);
  if (body.output_compression !== undefined && body.output_compression !== null) {
    const c = body.output_compression;
    if (typeof c !== "number" || !Number.isInteger(c) || c < 0 || c > 100) throw invalidRequest("output_compression", "output_compression must be an integer from 0 to 100.");
  }
  // Partial-image events would need their own relay and metering; one buffered answer is supported.
  if (body.stream === true) throw invalidRequest("stream", "Streaming image generation is not supported; omit stream.");
  return { model, prompt, n, size, quality, body };
}

function optionalString(body: Record<string, unknown>, field: string): string | null {
  const value = body[field];
  if (value === undefined || value === null) return null;
  if (typeof value !== "string") throw invalidRequest(field, `${field} must be a string.`);
  return value;
}

function oneOf(body: Record<string, unknown>, field: string, allowed: readonly string[]): string | null {
  const value = optionalString(body, field);
  if (value !== null && !allowed.includes(value)) throw invalidRequest(field, `${field} must be one of ${allowed.join(", ")}.`);
  return value;
}

/** The pricing key of a request: "SIZE/QUALITY", missing parts as "auto" (pricing falls back to SIZE, then "default"). */
export function imageVariant(request: ImageRequest): string {
  return `${request.size ?? "auto"}/${request.quality ?? "auto"}`;
}
