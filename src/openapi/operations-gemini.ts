// The /v1beta operations (Google's Gemini API, src/http/routes/gemini.ts). One registered route
// serves generateContent, streamGenerateContent, countTokens, embedContent and batchEmbedContents:
// its path parameter is `{model}:{method}`. Request schemas are the ones describe() checks with; the answers are Google's.
import { z } from "zod";
import { geminiCountTokensRequestSchema, geminiRequestSchema } from "../formats/gemini/request-schema.js";
import { geminiBatchEmbedContentsRequestSchema, geminiEmbedContentRequestSchema } from "../media/embeddings/gemini-embed-request.js";
import { v1, type OperationSpec } from "./operation-spec.js";
import { googleModelListSchema, googleModelSchema } from "./response-schemas-v1.js";

const part = z.looseObject({
  text: z.string().optional(),
  thought: z.boolean().optional(),
  functionCall: z.looseObject({ name: z.string(), args: z.record(z.string(), z.unknown()).optional(), id: z.string().optional() }).optional(),
});
const usageMetadata = z.object({
  promptTokenCount: z.number().int(),
  candidatesTokenCount: z.number().int(),
  totalTokenCount: z.number().int(),
  cachedContentTokenCount: z.number().int().optional(),
  thoughtsTokenCount: z.number().int().optional(),
});
const generateContentResponse = z.looseObject({
  candidates: z.array(
    z.looseObject({ content: z.object({ role: z.literal("model"), parts: z.array(part) }).optional(), finishReason: z.string().optional(), index: z.number().int() }),
  ),
  usageMetadata: usageMetadata.optional(),
  modelVersion: z.string().optional(),
  responseId: z.string().optional(),
});
const contentEmbedding = z.object({ values: z.array(z.number()) });

const modelMethodParam = z.object({
  model_method: z
    .string()
    .describe("`{model}:generateContent`, `:streamGenerateContent`, `:countTokens`, `:embedContent` or `:batchEmbedContents`; a `models/` prefix is accepted"),
});
const modelParam = z.object({ model: z.string().describe("A model id, with or without the `models/` prefix") });
const gemini = (spec: Parameters<typeof v1>[0]) => v1({ ...spec, auth: "google_api_key", errorShape: "google" });

const modelMethodOperation = (route: string, summary: string): OperationSpec =>
  gemini({
    method: "POST",
    route,
    wildcard: "model_method",
    summary,
    params: modelMethodParam,
    query: z.object({ alt: z.literal("sse").optional().describe("streamGenerateContent: SSE frames; absent: the JSON array stream") }),
    body: z.union([geminiRequestSchema, geminiCountTokensRequestSchema, geminiEmbedContentRequestSchema, geminiBatchEmbedContentsRequestSchema]),
    responses: {
      200: {
        description: "The response, its stream as a JSON array, the token count, or the embedding(s)",
        json: z.union([
          generateContentResponse,
          z.array(generateContentResponse),
          z.object({ totalTokens: z.number().int() }),
          z.object({ embedding: contentEmbedding }),
          z.object({ embeddings: z.array(contentEmbedding) }),
        ]),
        raw: [{ mediaType: "text/event-stream", description: "streamGenerateContent?alt=sse: one GenerateContentResponse per data: frame" }],
      },
    },
  });

export const GEMINI_OPERATIONS: readonly OperationSpec[] = [
  modelMethodOperation(
    "/v1beta/models/*",
    "Google Gemini API: generateContent, streamGenerateContent (alt=sse: SSE; without alt: one JSON array), countTokens (never billed), embedContent and batchEmbedContents (embedding models, billed as /v1/embeddings)",
  ),
  modelMethodOperation(
    "/v1/models/*",
    "The same Gemini API methods under Google's v1 (the genai SDK with apiVersion v1); GET /v1/models answers Google's list to a Google-style caller",
  ),
  gemini({
    method: "GET",
    route: "/v1beta/models",
    summary: "The chat and embedding models this key may use, in Google's list shape",
    query: z.object({ pageSize: z.string().optional().describe("1 to 1,000 (default 50)"), pageToken: z.string().optional() }),
    responses: { 200: { description: "OK", json: googleModelListSchema } },
  }),
  gemini({
    method: "GET",
    route: "/v1beta/models/*",
    wildcard: "model",
    summary: "One model, in Google's shape",
    params: modelParam,
    responses: { 200: { description: "OK", json: googleModelSchema } },
  }),
];
