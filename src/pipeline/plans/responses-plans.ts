// Responses clients: pass-through to upstreams that speak Responses, or bridged over Chat
// Completions (OpenAI-compatible or Anthropic upstreams), with stored turns for
// previous_response_id when the client asks to store them.
import type { ModelConfig } from "../../config/catalog.js";
import type { Usage } from "../../core/usage.js";
import { invalidRequest } from "../../errors/catalogue.js";
import type { ChatMessage } from "../../formats/openai-chat/index.js";
import {
  ChatStreamToResponsesEvents,
  convertChatMessagesForHistory,
  convertChatResponseToAssistantMessage,
  convertChatResponseToResponses,
  convertResponsesRequestToChat,
  type ResponsesObject,
  type ResponsesRequest,
} from "../../formats/openai-responses/index.js";
import type { ResponsesStore } from "../../store/responses-store.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../plan.js";
import { bridgeOverChat, type ChatBridge } from "./bridge-over-chat.js";
import { parseEventJson } from "./usage.js";

type Json = Record<string, unknown>;

interface ResponsesUsage {
  input_tokens?: number;
  output_tokens?: number;
  input_tokens_details?: { cached_tokens?: number };
  output_tokens_details?: { reasoning_tokens?: number };
}

/** What a stored turn holds: the response shown again by GET, and the history to continue from. */
export interface StoredTurn {
  response: ResponsesObject;
  messages: ChatMessage[];
}

/** The usage of a Responses object; its web search calls are its output items of type web_search_call. */
export function usageFromResponses(usage: ResponsesUsage | undefined | null, output?: unknown): Usage | null {
  if (!usage || typeof usage !== "object") return null;
  const items: unknown[] = Array.isArray(output) ? output : [];
  return {
    inputTokens: usage.input_tokens ?? 0,
    cachedInputTokens: usage.input_tokens_details?.cached_tokens ?? 0,
    outputTokens: usage.output_tokens ?? 0,
    reasoningTokens: usage.output_tokens_details?.reasoning_tokens ?? 0,
    webSearchCalls: items.filter((item) => typeof item === "object" && item !== null && (item as { type?: unknown }).type === "web_search_call").length,
    estimated: false,
  };
}

const TERMINAL = new Set(["response.completed", "response.incomplete", "response.failed"]);

export function responsesPassThrough(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  return {
    path: "/responses",
    body: { ...body, model: model.upstreamModel },
    stream,
    warnings: [],
    fromUpstream(json) {
      const response = json as Json & { usage?: ResponsesUsage };
      return { body: { ...response, model: model.id }, usage: usageFromResponses(response.usage, response.output) };
    },
    streamTranslator(): StreamTranslator {
      let usage: Usage | null = null;
      let delivered = "";
      // The latest response object and sequence number, for a length stop the gateway writes itself.
      let latest: Json | null = null;
      let sequence = 0;
      return {
        push(event): ClientFrame[] {
          const data = parseEventJson(event.data) as Json & { type?: string; delta?: unknown; sequence_number?: unknown; response?: Json & { usage?: ResponsesUsage } };
          if (data.response) data.response = latest = { ...data.response, model: model.id };
          if (typeof data.sequence_number === "number") sequence = data.sequence_number;
          if (typeof data.delta === "string") delivered += data.delta;
          if (data.type && TERMINAL.has(data.type)) {
            usage = usageFromResponses(data.response?.usage, data.response?.output);
            return [{ event: event.event ?? data.type, data, usageAt: "response.usage" }];
          }
          return [{ event: event.event ?? data.type, data }];
        },
        end: () => [],
        stopAtLimit: () => {
          const response = { ...latest, model: model.id, status: "incomplete", incomplete_details: { reason: "max_output_tokens" } };
          return [{ event: "response.incomplete", data: { type: "response.incomplete", sequence_number: sequence + 1, response } }];
        },
        fail: (_type, message) => [{ event: "error", data: { type: "error", code: "server_error", message, param: null } }],
        reportedUsage: () => usage,
        deliveredText: () => delivered,
      };
    },
  };
}

/** The upstream side of a bridged Responses request: its Chat plan, and whether that carries reasoning_effort. */
export interface ChatUpstream {
  chatPlan: (body: Json, model: ModelConfig) => UpstreamPlan;
  reasoningEffort: boolean;
}

export async function responsesOverChat(body: Json, model: ModelConfig, accountId: string, responses: ResponsesStore, upstream: ChatUpstream): Promise<UpstreamPlan> {
  let history: ChatMessage[] | undefined;
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    if (typeof body.previous_response_id !== "string") throw invalidRequest("previous_response_id", "previous_response_id must be a string.");
    const stored = (await responses.get(accountId, body.previous_response_id)) as StoredTurn | null;
    if (!stored) throw invalidRequest("previous_response_id", `No stored response ${body.previous_response_id} (unknown, expired or stored with store: false).`);
    history = stored.messages;
  }
  const converted = convertResponsesRequestToChat(body, { history, upstreamAcceptsReasoningEffort: upstream.reasoningEffort });
  const { request, conversation, toolNamespaces } = converted;
  if (request.stream) request.stream_options = { include_usage: true };
  const store = body.store !== false;
  const buildOptions = { model: model.id, request: body as unknown as ResponsesRequest, toolNamespaces };
  let finished: StoredTurn | undefined;

  const bridge: ChatBridge = {
    fromChatCompletion(completion) {
      const response = convertChatResponseToResponses(completion, buildOptions);
      finished = { response, messages: convertChatMessagesForHistory(conversation, convertChatResponseToAssistantMessage(completion)) };
      return response;
    },
    stream() {
      const machine = new ChatStreamToResponsesEvents(buildOptions);
      const frames = (events: ReturnType<ChatStreamToResponsesEvents["push"]>): ClientFrame[] =>
        events.map((e) => (TERMINAL.has(e.type) ? { event: e.type, data: e, usageAt: "response.usage" } : { event: e.type, data: e }));
      return {
        push: (chunk) => frames(machine.push(chunk)),
        finish: () => {
          const out = frames(machine.finish());
          if (machine.response) finished = { response: machine.response, messages: convertChatMessagesForHistory(conversation, machine.assistantMessage()) };
          return out;
        },
        abort: (type, message) => frames(machine.abort(message, type)),
      };
    },
  };
  const plan = bridgeOverChat(upstream.chatPlan(request, model), bridge, converted.warnings);
  plan.complete = async () => {
    if (store && finished) await responses.save(accountId, finished.response.id, finished);
  };
  return plan;
}
