// POST /v1/videos request checks. The official SDK sends multipart/form-data (it may carry an image
// upload); plain JSON with the same fields is accepted too. Every failure names its field.
import { invalidRequest } from "../../errors/catalogue.js";

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
  if (Buffer.isBuffer(body)) return fromFields(await formFields(body, contentType ?? ""));
  if (!body || typeof body !== "object" || Array.isArray(body)) throw invalidRequest("body", "The request body must be a JSON object or multipart form.");
  const fields = body as Record<string, unknown>;
  if (fields.input_reference !== undefined && fields.input_reference !== null) {
    throw invalidRequest("input_reference", "input_reference must be an image file uploaded as multipart/form-data.");
  }
  return fromFields(new Map(Object.entries(fields)));
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

function fromFields(fields: Map<string, unknown>): VideoRequest {
  const model = fields.get("model");
  if (typeof model !== "string" || model === "") throw invalidRequest("model", "model is required and must be a string.");
  const prompt = fields.get("prompt");
  if (typeof prompt !== "string" || prompt.trim() === "") throw invalidRequest("prompt", "prompt is required and must be a non-empty string.");

  let seconds: number | null = null;
  const rawSeconds = fields.get("seconds");
  if (rawSeconds !== undefined && rawSeconds !== null && rawSeconds !== "") {
    const value = typeof rawSeconds === "string" && /^\d+$/.test(rawSeconds.trim()) ? Number(rawSeconds) : rawSeconds;
    if (typeof value !== "number" || !Number.isInteger(value) || value < 1 || value > MAX_VIDEO_SECONDS) {
      throw invalidRequest("seconds", `seconds must be a whole number from 1 to ${MAX_VIDEO_SECONDS}, for example "8".`);
    }
    seconds = value;
  }

  let size: string | null = null;
  const rawSize = fields.get("size");
  if (rawSize !== undefined && rawSize !== null && rawSize !== "") {
    if (typeof rawSize !== "string" || !/^[1-9]\d{1,4}x[1-9]\d{1,4}$/.test(rawSize)) throw invalidRequest("size", 'size must be WIDTHxHEIGHT, for example "1280x720".');
    size = rawSize;
  }

  const reference = fields.get("input_reference");
  let inputReference: File | null = null;
  if (reference !== undefined && reference !== null && reference !== "") {
    if (!(reference instanceof File)) throw invalidRequest("input_reference", "input_reference must be an uploaded image file.");
    inputReference = reference;
  }
  return { model, prompt, seconds, size, inputReference };
}
