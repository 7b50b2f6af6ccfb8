// What the gateway needs to know about one kind of upstream, in one object: how to authenticate a
// request, how to decode its stream, how Chat requests (and the client formats it speaks natively)
// become its requests, how its usage reads, which media APIs it has, and what it can serve.
// Every part is required; a part an upstream lacks is written out as absent (null, or an optional
// key of nativePlans/media), so that a new type has to decide each one and nothing falls back to
// another type's format. Recipe: CONTRIBUTING.md, "Adding an upstream type".
import type { ModelConfig, ModelKind, ProviderConfig, ProviderSetting, UpstreamApi } from "../core/catalog.js";
import type { SseEvent } from "../core/sse.js";
import type { Usage } from "../core/usage.js";
import type { EmbeddingRequest } from "./embedding-request.js";
import type { VideoAdapter } from "./video-adapter.js";
import type { UpstreamPlan } from "./plan.js";
import type { Cancellation } from "../core/cancellation.js";
import type { UpstreamHttpResponse, UpstreamRequest } from "./upstream-client.js";

/** The client's request headers, for the few an upstream passes on (anthropic-version, anthropic-beta). */
export type ClientHeaders = Record<string, string | string[] | undefined>;

/**
 * Adds one upstream key's credentials to a request that is otherwise ready to send. It sees the
 * method, URL, headers and serialised body, so a signing scheme (AWS SigV4) fits the same slot.
 */
export type Authenticate = (request: UpstreamRequest, key: string, clientHeaders: ClientHeaders, provider: ProviderConfig) => void;

/** An Authenticate that must hash before it can sign (AWS SigV4 through @smithy/signature-v4 is asynchronous). */
export type SignRequest = (request: UpstreamRequest, key: string, clientHeaders: ClientHeaders, provider: ProviderConfig) => Promise<void>;

/**
 * How a request reaches an upstream that is not an HTTP server: a function call inside the gateway
 * process (the demo type), answering as the HTTP client would. Null for every network upstream.
 */
export type Transport = (provider: ProviderConfig, request: UpstreamRequest, signal: AbortSignal | Cancellation) => Promise<UpstreamHttpResponse>;

/** Bytes of a streamed answer in, events out; end() flushes what the last bytes left open. */
export interface StreamDecoder {
  push(chunk: Uint8Array): SseEvent[];
  end(): SseEvent[];
}

/** A client request body and its model in, this upstream's request and the way back out. */
export type PlanBuilder = (body: Record<string, unknown>, model: ModelConfig) => UpstreamPlan;

/**
 * A Gemini API client's request (generateContent) on an upstream that speaks it: the model and the
 * stream choice travel in the path, not in the body, so the route hands them over.
 */
export type GeminiPlanBuilder = (body: Record<string, unknown>, model: ModelConfig, call: { stream: boolean }) => UpstreamPlan;

/**
 * A token counter the upstream answers itself (Anthropic's POST /v1/messages/count_tokens, Gemini's
 * :countTokens): the path and body for a client's count request in that format. The answer passes
 * back as the upstream gave it, scrubbed.
 */
export type CountTokensPlan = (body: Record<string, unknown>, model: ModelConfig) => { path: string; body: Record<string, unknown> };

/** The OpenAI Images API (POST {base}{generationsPath(model)}, JSON in and out). */
export interface ImagesApi {
  /** The path under the base URL; a function of the model, for upstreams that address a deployment (Azure). */
  generationsPath: (model: ModelConfig) => string;
}

/**
 * An embeddings API (POST {base}{path(model)}, JSON in and out). Without readAnswer the upstream
 * answers OpenAI's embeddings list in the encoding it was asked for, and the answer passes through.
 */
export interface EmbeddingsApi {
  path: (model: ModelConfig) => string;
  /** The upstream's request body; throws invalid_request for an input it cannot take. */
  requestBody: (request: EmbeddingRequest, model: ModelConfig) => Record<string, unknown>;
  /**
   * For an answer in another shape: its vectors (floats, in input order) and the input tokens it
   * reports (null: none). The gateway builds OpenAI's list from them, base64 when the client asked.
   */
  readAnswer?: (answer: unknown) => { vectors: number[][]; promptTokens: number | null };
}

export interface UpstreamCapabilities {
  /** Model kinds a provider of this type can serve; config load refuses the others. */
  kinds: readonly ModelKind[];
  /** The values a provider's `apis` list may hold for this type; config load refuses the others. */
  apis: readonly UpstreamApi[];
  /** The `apis` list of a provider that gives none. */
  defaultApis: readonly UpstreamApi[];
  /** Its Chat plan carries reasoning_effort (a Responses request's reasoning.effort) upstream. */
  chatReasoningEffort: boolean;
  /**
   * Its answers stop at the output limit sent (max_tokens or its equivalent). False: the gateway
   * itself ends a clamped stream at the limit it was admitted with (docs/billing.md, "Clamping").
   */
  honorsOutputLimit: boolean;
  /** The optional provider settings this type takes; config load refuses the others, naming the field. */
  providerSettings: readonly ProviderSetting[];
  /** Its answers are made up by the gateway itself, not by a model: its models are marked demo in /v1/models and /v1/catalog. */
  demo: boolean;
}

/**
 * The smallest request that shows whether one key works ("Test" on a provider key, docs/operations.md):
 * a Chat Completions body, sent through the type's chatPlan to the provider's cheapest chat model.
 */
export interface KeyTest {
  chatBody: Readonly<Record<string, unknown>>;
}

/** One short message and one output token: what every chat type here can be asked for. */
export const ONE_TOKEN_CHAT: KeyTest = { chatBody: { messages: [{ role: "user", content: "Say OK." }], max_tokens: 1, stream: false } };

export interface UpstreamDescriptor {
  authenticate: Authenticate | SignRequest;
  /** Requests go over HTTP (null) or to this in-process transport instead (the demo type). */
  transport: Transport | null;
  /** A decoder for one streamed answer (every type today speaks SSE). */
  streamDecoder: () => StreamDecoder;
  /** How a Chat Completions request is served: the upstream's request and the answer as Chat. Null: no chat models. */
  chatPlan: PlanBuilder | null;
  /**
   * Client formats this upstream speaks itself, served without the bridge over chatPlan. Chat
   * clients use nativePlans.chat when present, else chatPlan; Responses pass-through also needs
   * `responses` in the provider's apis. countTokens serves /v1/messages/count_tokens; without it
   * the gateway answers its documented estimate. gemini serves Gemini API clients (/v1beta), and
   * geminiCountTokens their `:countTokens` (without it, the estimate).
   */
  nativePlans: {
    chat?: PlanBuilder;
    messages?: PlanBuilder;
    responses?: PlanBuilder;
    gemini?: GeminiPlanBuilder;
    countTokens?: CountTokensPlan;
    geminiCountTokens?: CountTokensPlan;
  };
  /** The usage object of this upstream's own answers, as the gateway's Usage; null when absent or when the type reports none. */
  readUsage: (reported: unknown) => Usage | null;
  media: { images?: ImagesApi; videos?: VideoAdapter; embeddings?: EmbeddingsApi };
  capabilities: UpstreamCapabilities;
  /** How "Test" on one of its keys asks the least of it; null: the type has no such request (its keys are tested by traffic only). */
  keyTest: KeyTest | null;
}
