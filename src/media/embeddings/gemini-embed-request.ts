// Google's embedContent and batchEmbedContents bodies (POST /v1beta/models/{model}:embedContent,
// :batchEmbedContents), checked and turned into the gateway's EmbeddingRequest, so that they run
// the very path /v1/embeddings runs (handle-embeddings.ts) on every upstream type. Each request's
// content is text parts only (joined with a newline: one content, one vector); taskType and title go
// to a Gemini upstream with their input (no other upstream type has them); outputDimensionality is the
// request's `dimensions`, so a batch must use one value. Every refusal names its field.
import { z } from "zod";
import { invalidRequest } from "../../errors/catalogue.js";
import { checkRequestBody } from "../../formats/fields.js";
import type { EmbeddingRequest } from "../../upstreams/embedding-request.js";
import { MAX_EMBEDDING_DIMENSIONS, MAX_EMBEDDING_INPUT_CHARS, parseEmbeddingRequest } from "./embedding-request.js";

/** Google's own limit of requests in one batchEmbedContents call. */
export const MAX_GEMINI_BATCH_REQUESTS = 100;
/** Text parts of one content: more than any client sends for one vector. */
export const MAX_EMBED_PARTS = 64;
export const MAX_EMBED_TITLE_CHARS = 1_024;
/** Longer than any model name the config takes (with its `models/` prefix). */
const MAX_MODEL_NAME = 300;

export const GEMINI_TASK_TYPES = [
  "TASK_TYPE_UNSPECIFIED",
  "RETRIEVAL_QUERY",
  "RETRIEVAL_DOCUMENT",
  "SEMANTIC_SIMILARITY",
  "CLASSIFICATION",
  "CLUSTERING",
  "QUESTION_ANSWERING",
  "FACT_VERIFICATION",
  "CODE_RETRIEVAL_QUERY",
] as const;

const DIMENSIONS_MESSAGE = `outputDimensionality must be an integer from 1 to ${MAX_EMBEDDING_DIMENSIONS}.`;
// A part that is not text (inlineData, fileData...) is refused by its own name, before text is looked for.
const textPart = z
  .record(z.string(), z.unknown(), { error: "each part must be an object." })
  .superRefine((part, context) => {
    const other = Object.keys(part).find((key) => key !== "text");
    if (other !== undefined) context.addIssue({ code: "custom", path: [other], message: `embeddings take text parts only; ${other} is not supported.` });
  })
  .pipe(
    z.object({
      text: z
        .string({ error: "text must be a string." })
        .min(1, "text must not be empty.")
        .max(MAX_EMBEDDING_INPUT_CHARS, `text is longer than ${MAX_EMBEDDING_INPUT_CHARS} characters.`),
    }),
  );

export const geminiEmbedContentRequestSchema = z.strictObject({
  model: z.string({ error: "model must be a string." }).max(MAX_MODEL_NAME, `model is longer than ${MAX_MODEL_NAME} characters.`).optional(),
  content: z.strictObject(
    {
      role: z.enum(["user"], { error: "role must be user." }).optional(),
      parts: z.array(textPart, { error: "parts must be an array." }).min(1, "parts must not be empty.").max(MAX_EMBED_PARTS, `parts holds at most ${MAX_EMBED_PARTS} parts.`),
    },
    { error: "content must be an object with parts." },
  ),
  taskType: z.enum(GEMINI_TASK_TYPES, { error: `taskType must be one of ${GEMINI_TASK_TYPES.join(", ")}.` }).optional(),
  title: z.string({ error: "title must be a string." }).max(MAX_EMBED_TITLE_CHARS, `title is longer than ${MAX_EMBED_TITLE_CHARS} characters.`).optional(),
  outputDimensionality: z.number({ error: DIMENSIONS_MESSAGE }).int(DIMENSIONS_MESSAGE).min(1, DIMENSIONS_MESSAGE).max(MAX_EMBEDDING_DIMENSIONS, DIMENSIONS_MESSAGE).optional(),
});

export const geminiBatchEmbedContentsRequestSchema = z.strictObject({
  requests: z
    .array(geminiEmbedContentRequestSchema, { error: "requests must be an array." })
    .min(1, "requests must not be empty.")
    .max(MAX_GEMINI_BATCH_REQUESTS, `requests holds at most ${MAX_GEMINI_BATCH_REQUESTS} requests.`),
});

type EmbedContentRequest = z.infer<typeof geminiEmbedContentRequestSchema>;

/** The gateway's request for `model` (the path's, without `models/`) from an embedContent or batchEmbedContents body. */
export function parseGeminiEmbedRequest(body: unknown, model: string, batch: boolean): EmbeddingRequest {
  const requests: Array<{ request: EmbedContentRequest; field: string }> = batch
    ? checkRequestBody(geminiBatchEmbedContentsRequestSchema, body).requests.map((request, i) => ({ request, field: `requests[${i}]` }))
    : [{ request: checkRequestBody(geminiEmbedContentRequestSchema, body), field: "" }];
  const at = (field: string, name: string) => (field === "" ? name : `${field}.${name}`);
  const dimensions = requests[0]!.request.outputDimensionality ?? null;
  for (const { request, field } of requests) {
    // Google's batch requires each request's model to be the path's; a different one is refused, not ignored.
    if (request.model !== undefined && request.model !== model && request.model !== `models/${model}`) {
      throw invalidRequest(at(field, "model"), `${at(field, "model")} must be the model in the path (models/${model}).`);
    }
    if ((request.outputDimensionality ?? null) !== dimensions) {
      throw invalidRequest(at(field, "outputDimensionality"), "Every request of a batch must ask for the same outputDimensionality.");
    }
  }
  const input = requests.map(({ request }) => request.content.parts.map((part) => part.text).join("\n"));
  // The bounds of /v1/embeddings (text length, total tokens) apply as they are.
  const parsed = parseEmbeddingRequest({ model, input, dimensions, encoding_format: "float" });
  const inputHints = requests.map(({ request }) => ({ taskType: request.taskType ?? null, title: request.title ?? null }));
  return { ...parsed, inputHints: inputHints.some((h) => h.taskType !== null || h.title !== null) ? inputHints : null };
}
