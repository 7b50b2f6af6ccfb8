// The /v1 operations of the OpenAPI document: models and the account, then the model routes.
// Request schemas come from the route modules; answers from response-schemas.ts.
import { z } from "zod";
import { embeddingRequestSchema } from "../media/embeddings/embedding-request.js";
import { imageRequestSchema } from "../media/images/image-request.js";
import { videoReadSchemas } from "../media/videos/read-video.js";
import { videoJsonRequestSchema, videoRequestSchema } from "../media/videos/video-request.js";
import { usageQuerySchema } from "../http/routes/account.js";
import { anthropicModelQuerySchema } from "../http/routes/models.js";
import { requestIdParamSchema } from "../http/routes/request-record.js";
import { chatRequestSchema, countTokensRequestSchema, messagesRequestSchema, responsesRequestSchema } from "../formats/request-schemas.js";
import { ok, sse, v1, type OperationSpec } from "./operation-spec.js";
import * as r from "./response-schemas.js";

// Path parameters no route checks beyond being a path segment (the lookup answers 404).
const modelParam = z.object({ id: z.string() });
const responseIdParam = z.object({ id: z.string() });

export const V1_OPERATIONS: readonly OperationSpec[] = [
  // ---- /v1: models and the account ----
  v1({
    method: "GET",
    route: "/v1/models",
    summary: "The models this key may use (Google's list shape to callers with x-goog-api-key or ?key=, Anthropic's to Anthropic-style callers)",
    auth: "any_api_key",
    errorShape: "by_caller",
    query: anthropicModelQuerySchema,
    responses: ok(r.modelListSchema),
  }),
  v1({
    method: "GET",
    route: "/v1/models/*",
    wildcard: "id",
    summary: "One model",
    auth: "any_api_key",
    errorShape: "by_caller",
    params: modelParam,
    responses: ok(r.modelSchema),
  }),
  v1({
    method: "GET",
    route: "/v1/catalog",
    summary: "The public catalogue: every model, its prices and tiers (cacheable, ETag)",
    auth: "none",
    responses: { 200: { description: "OK", json: r.catalogSchema }, 304: { description: "Not modified (If-None-Match)" } },
  }),
  v1({ method: "GET", route: "/v1/me", summary: "The key's account, policy, limits and this month's usage", responses: ok(r.meSchema) }),
  v1({ method: "GET", route: "/v1/usage", summary: "The key's usage by model and by day", query: usageQuerySchema, responses: ok(r.keyUsageSchema) }),
  v1({
    method: "GET",
    route: "/v1/requests/*",
    wildcard: "request_id",
    summary: "One request of the account (its ledger row)",
    params: requestIdParamSchema,
    responses: ok(r.requestRecordSchema),
  }),

  // ---- /v1: model routes ----
  v1({
    method: "POST",
    route: "/v1/chat/completions",
    summary: "OpenAI Chat Completions",
    body: chatRequestSchema,
    responses: { 200: { description: "The completion, or its stream", json: r.chatCompletionSchema, raw: [sse("Chat Completions")] } },
  }),
  v1({
    method: "POST",
    route: "/v1/messages",
    summary: "Anthropic Messages",
    errorShape: "anthropic",
    body: messagesRequestSchema,
    responses: { 200: { description: "The message, or its stream", json: r.messageSchema, raw: [sse("Anthropic Messages")] } },
  }),
  v1({
    method: "POST",
    route: "/v1/messages/count_tokens",
    summary: "Anthropic token counting (never billed)",
    errorShape: "anthropic",
    body: countTokensRequestSchema,
    responses: ok(r.countTokensSchema),
  }),
  v1({
    method: "POST",
    route: "/v1/responses",
    summary: "OpenAI Responses",
    body: responsesRequestSchema,
    responses: { 200: { description: "The response, or its stream", json: r.responseObjectSchema, raw: [sse("Responses")] } },
  }),
  v1({ method: "GET", route: "/v1/responses/:id", summary: "A stored response", params: responseIdParam, responses: ok(r.responseObjectSchema) }),
  v1({ method: "POST", route: "/v1/embeddings", summary: "OpenAI Embeddings", body: embeddingRequestSchema, responses: ok(r.embeddingListSchema) }),
  v1({ method: "POST", route: "/v1/images/generations", summary: "OpenAI Images", body: imageRequestSchema, responses: ok(r.imagesResponseSchema) }),
  v1({
    method: "POST",
    route: "/v1/videos",
    summary: "Start a video generation (OpenAI Videos)",
    body: videoJsonRequestSchema,
    otherBodies: { "multipart/form-data": videoRequestSchema },
    responses: ok(r.videoSchema),
  }),
  v1({ method: "GET", route: "/v1/videos/:id", summary: "A video task", params: videoReadSchemas.params, query: videoReadSchemas.pollQuery, responses: ok(r.videoSchema) }),
  v1({
    method: "GET",
    route: "/v1/videos/:id/content",
    summary: "A finished video's bytes",
    params: videoReadSchemas.params,
    query: videoReadSchemas.contentQuery,
    responses: {
      200: { description: "The video file", raw: [{ mediaType: "application/octet-stream", description: "The video, in the upstream's media type (video/mp4 usually)" }] },
    },
  }),
];
