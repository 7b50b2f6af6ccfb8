// Google's Gemini API (v1beta), for the @google/genai SDK and Gemini CLI: generateContent,
// streamGenerateContent (alt=sse: SSE; without it, the JSON array Google's REST API streams),
// countTokens (never billed: the upstream's count on a Gemini-native model, else the estimate) and the model list. The key comes in x-goog-api-key or ?key= (Bearer
// works too); errors come in Google's envelope (renderError's "google" shape). Every model the key
// may use answers here, whatever its upstream type: a Gemini-native upstream passes the request
// through, any other is bridged over its Chat plan (src/formats/gemini).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ModelConfig } from "../../core/catalog.js";
import { GatewayError, invalidRequest } from "../../errors/catalogue.js";
import { geminiFormat } from "../../formats/gemini/gemini-format.js";
import { unknownModel, usableModels } from "../../pipeline/admission.js";
import { authenticate, GOOGLE_API_KEY } from "../../pipeline/authenticate.js";
import { stopIfClientGone } from "../../pipeline/client-departure.js";
import { handleModelRequest } from "../../pipeline/handle-model-request.js";
import { countGeminiTokens } from "../../pipeline/count-tokens.js";
import type { GeminiModel } from "../../wire/gemini/types.js";
import type { RouteContext } from "../route-context.js";

export const GEMINI_PREFIX = "/v1beta/models";
/**
 * The same methods under Google's stable version (the genai SDK with apiVersion "v1" posts here).
 * GET /v1/models and /v1/models/{id} are models.ts's: Google's list to a caller with a Google key
 * signal (isGoogleStyle), OpenAI's or Anthropic's to the others.
 */
export const GEMINI_V1_PREFIX = "/v1/models";
const ACTIONS = ["generateContent", "streamGenerateContent", "countTokens", "embedContent", "batchEmbedContents"] as const;
type Action = (typeof ACTIONS)[number];
export type EmbedAction = Extract<Action, "embedContent" | "batchEmbedContents">;
/** Serves the embedding methods; the media layer has the embeddings path, so it is handed in (register-media-routes.ts). */
export type GeminiEmbedHandler = (action: EmbedAction, model: string, request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** Longer than any model id the config takes; the path is bounded before anything looks it up. */
const MAX_MODEL_LENGTH = 256;
const DEFAULT_PAGE = 50;
const MAX_PAGE = 1000;

/** `models/gemini-2.5-flash` and `gemini-2.5-flash` name the same model (Google's clients send either). */
export function geminiModelId(name: string): string {
  const id = name.startsWith("models/") ? name.slice("models/".length) : name;
  if (id === "" || id.length > MAX_MODEL_LENGTH) throw invalidRequest("model", `The model in the path must be 1 to ${MAX_MODEL_LENGTH} characters.`);
  return id;
}

/** `{model}:{action}` from the path after /v1beta/models/; the model may hold slashes (a gateway id such as `openai/gpt-4o`). */
export function parseModelAction(rest: string): { model: string; action: Action } {
  const colon = rest.lastIndexOf(":");
  const action = colon < 0 ? "" : rest.slice(colon + 1);
  if (!(ACTIONS as readonly string[]).includes(action)) {
    throw new GatewayError(
      "not_found",
      `No method ${action === "" ? "in the path" : action}: use {model}:generateContent, :streamGenerateContent, :countTokens, :embedContent or :batchEmbedContents.`,
    );
  }
  return { model: geminiModelId(rest.slice(0, colon)), action: action as Action };
}

export function googleModel(model: ModelConfig): GeminiModel {
  const entry: GeminiModel = {
    name: `models/${model.id}`,
    baseModelId: model.id,
    version: "gateway",
    displayName: model.id,
    supportedGenerationMethods: model.kind === "embedding" ? ["embedContent", "batchEmbedContents"] : ["generateContent", "streamGenerateContent", "countTokens"],
  };
  if (model.contextWindow !== null) entry.inputTokenLimit = model.contextWindow;
  if (model.maxOutputTokens !== null) entry.outputTokenLimit = model.maxOutputTokens;
  return entry;
}

/** Google's page: pageSize (1 to 1,000, default 50) and the opaque pageToken of the previous answer (here: the next index). */
export function googleModelPage(models: readonly ModelConfig[], query: Record<string, unknown>): { models: GeminiModel[]; nextPageToken?: string } {
  const size = query.pageSize === undefined ? DEFAULT_PAGE : Number(query.pageSize);
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) throw invalidRequest("pageSize", `pageSize must be an integer from 1 to ${MAX_PAGE}.`);
  let start = 0;
  if (query.pageToken !== undefined && query.pageToken !== "") {
    const token = query.pageToken;
    start = typeof token === "string" && /^\d{1,6}$/.test(token) ? Number(token) : -1;
    if (start < 0 || start > models.length) throw invalidRequest("pageToken", "pageToken is not one this list gave.");
  }
  const end = Math.min(models.length, start + size);
  return { models: models.slice(start, end).map(googleModel), ...(end < models.length && { nextPageToken: String(end) }) };
}

/** The models a key may use that Google's API serves: chat and embedding models. */
export function googleVisible(models: Iterable<ModelConfig>): ModelConfig[] {
  return [...models].filter((m) => m.kind === "chat" || m.kind === "embedding");
}

/**
 * A caller of Google's API on a path shared with OpenAI's (GET /v1/models): the key in
 * x-goog-api-key or ?key=, which only Google's clients use (the genai SDK with apiVersion "v1").
 */
export function isGoogleStyle(request: FastifyRequest): boolean {
  return request.headers["x-goog-api-key"] !== undefined || (request.query as Record<string, unknown> | undefined)?.key !== undefined;
}

export function registerGeminiRoutes(app: FastifyInstance, ctx: RouteContext, embed: GeminiEmbedHandler): void {
  const { authCache } = ctx.pipeline;
  const rest = (request: FastifyRequest) => (request.params as Record<string, string | undefined>)["*"] ?? "";
  // The model routes bill (admission reads the standing again); counting and listing do not.
  const onModelRequestUnder = (prefix: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const { action } = parseModelAction(rest(request));
    // One registered route serves five methods: the log, metrics and traces name each.
    request.meter.route = `${prefix}/{model}:${action}`;
    await authenticate(request, authCache, action === "countTokens" ? "exact" : "cached", GOOGLE_API_KEY);
    if (action !== "countTokens") await stopIfClientGone(request, reply, request.snapshot.pipeline);
  };
  const onUnbilledRequest = async (request: FastifyRequest) => {
    await authenticate(request, authCache, "exact", GOOGLE_API_KEY);
  };
  // Chat and embedding models: the methods this API serves here.
  const visible = (request: FastifyRequest) => googleVisible(usableModels(request.snapshot.config.models.values(), request));

  const serveModelMethod = async (request: FastifyRequest, reply: FastifyReply) => {
    const { model, action } = parseModelAction(rest(request));
    const body = request.body;
    if (!body || typeof body !== "object" || Array.isArray(body)) throw invalidRequest("body", "The request body must be a JSON object.");
    if (action === "embedContent" || action === "batchEmbedContents") return embed(action, model, request, reply);
    // Never billed, like /v1/messages/count_tokens: the upstream's own count on a Gemini-native model, else the estimate.
    if (action === "countTokens") return countGeminiTokens(request.snapshot.pipeline, model, body as Record<string, unknown>, request, reply);
    const stream = action === "streamGenerateContent";
    const alt = (request.query as Record<string, unknown>).alt;
    if (stream && alt !== undefined && alt !== "sse") throw invalidRequest("alt", "alt must be sse, or absent for the JSON array stream.");
    const format = geminiFormat({ model, stream, jsonArray: stream && alt === undefined });
    return handleModelRequest(request.snapshot.pipeline, format, request, reply);
  };
  for (const prefix of [GEMINI_PREFIX, GEMINI_V1_PREFIX]) app.post(`${prefix}/*`, { onRequest: onModelRequestUnder(prefix) }, serveModelMethod);

  app.get(GEMINI_PREFIX, { onRequest: onUnbilledRequest }, async (request) => googleModelPage(visible(request), request.query as Record<string, unknown>));
  app.get(`${GEMINI_PREFIX}/*`, { onRequest: onUnbilledRequest }, async (request) => {
    const id = geminiModelId(rest(request));
    const usable = visible(request);
    const model = usable.find((m) => m.id === id);
    if (!model) throw unknownModel(id, usable);
    return googleModel(model);
  });
}
