// POST /v1/videos request checks. The official SDK sends multipart/form-data (it may carry an image
// upload); plain JSON with the same fields is accepted too. Every failure names its field.
import { z } from "zod";
import { invalidRequest } from "../../errors/catalogue.js";
import { checkRequestBody } from "../../formats/fields.js";

export interface VideoRequest {
  model: string;
  prompt: string;
  /** Null when the client named none (the gateway's default applies). */
  seconds: number | null;
  size: string | null;
  inputReference: File | null;
}

/** Bounds the hold of one task; providers accept far less (Sora 4-12 s, Veo 4-8 s). */
export const MAX_VIDEO_SECONDS = 600;

export async function parseVideoRequest(body: unknown, contentType: string | undefined): Promise<VideoRequest> {
  if (Buffer.isBuffer(body)) return fromFields(videoRequestSchema, Object.fromEntries(await formFields(body, contentType ?? "")));
  if (!body || typeof body !== "object" || Array.isArray(body)) throw invalidRequest("body", "The request body must be a JSON object or multipart form.");
  return fromFields(videoJsonRequestSchema, body as Record<string, unknown>);
}

async function formFields(body: Buffer, contentType: string): Promise<Map<string, unknown>> {
  let form: FormData;
  try {
    form = await new Response(body, { headers: { "content-type": contentType } }).formData();
  } catch {
    throw invalidRequest("body", "The multipart body could not be read.");
  }
  const fields = new Map<string, unknown>();
  for (const [name, value] of form.entries()) {
    // The SDK spells an object-valued input_reference ({image_url} / {file_id}) as input_reference[...].
    if (name.startsWith("input_reference[")) throw invalidRequest("input_reference", "input_reference must be an uploaded image file.");
    fields.set(name, value);
  }
  return fields;
}

const SECONDS_MESSAGE = `seconds must be a whole number from 1 to ${MAX_VIDEO_SECONDS}, for example "8".`;
const emptyAsAbsent = (value: unknown) => (value === "" ? undefined : value);

/**
 * The fields as the gateway checks them, from a JSON body or a multipart form (where every field
 * but the upload is text); the OpenAPI document describes the route from it (src/openapi).
 */
export const videoRequestSchema = z.looseObject({
  model: z.string({ error: "model is required and must be a string." }).min(1, "model is required and must be a string."),
  prompt: z.string({ error: "prompt is required and must be a non-empty string." }).refine((text) => text.trim() !== "", "prompt is required and must be a non-empty string."),
  seconds: z.preprocess(
    emptyAsAbsent,
    z
      .union([z.number().int().min(1).max(MAX_VIDEO_SECONDS), z.string().regex(/^\s*\d{1,4}\s*$/)], { error: SECONDS_MESSAGE })
      .nullable()
      .optional(),
  ),
  size: z.preprocess(
    emptyAsAbsent,
    z
      .string({ error: 'size must be WIDTHxHEIGHT, for example "1280x720".' })
      .regex(/^[1-9]\d{1,4}x[1-9]\d{1,4}$/, 'size must be WIDTHxHEIGHT, for example "1280x720".')
      .nullable()
      .optional(),
  ),
  input_reference: z.preprocess(emptyAsAbsent, z.instanceof(File, { error: "input_reference must be an uploaded image file." }).nullable().optional()),
});

/** The same fields as JSON, where no file can travel. */
export const videoJsonRequestSchema = videoRequestSchema.extend({
  input_reference: z.null({ error: "input_reference must be an image file uploaded as multipart/form-data." }).optional(),
});

function fromFields(schema: typeof videoRequestSchema | typeof videoJsonRequestSchema, fields: Record<string, unknown>): VideoRequest {
  const checked = checkRequestBody(schema, fields);
  let seconds: number | null = null;
  if (checked.seconds !== undefined && checked.seconds !== null) {
    seconds = Number(checked.seconds);
    // A text field's number is bounded here: the schema can only say it is digits.
    if (seconds < 1 || seconds > MAX_VIDEO_SECONDS) throw invalidRequest("seconds", SECONDS_MESSAGE);
  }
  return { model: checked.model, prompt: checked.prompt, seconds, size: checked.size ?? null, inputReference: checked.input_reference ?? null };
}
