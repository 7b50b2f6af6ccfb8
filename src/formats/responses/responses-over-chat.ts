// Responses clients bridged over Chat Completions (OpenAI-compatible or Anthropic upstreams), with
// stored turns for previous_response_id when the client asks to store them.
import type { ModelConfig } from "../../core/catalog.js";
import { invalidRequest } from "../../errors/catalogue.js";
import type { ChatMessage } from "../../wire/chat/index.js";
import {
  ChatStreamToResponsesEvents,
  convertChatMessagesForHistory,
  convertChatResponseToAssistantMessage,
  convertChatResponseToResponses,
  convertResponsesRequestToChat,
  type ResponsesObject,
  type ResponsesRequest,
} from "./index.js";
import { RESPONSES_TERMINAL_EVENTS } from "../../wire/responses/events.js";
import { checkStorableId } from "../../core/stored-text.js";
import type { ResponsesStore } from "../../store/responses-store.js";
import type { ClientFrame, UpstreamPlan } from "../../upstreams/plan.js";
import { bridgeOverChat, type ChatBridge } from "../bridge-over-chat.js";

type Json = Record<string, unknown>;

/** What a stored turn holds: the response shown again by GET, and the history to continue from. */
export interface StoredTurn {
  response: ResponsesObject;
  messages: ChatMessage[];
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
    checkStorableId("previous_response_id", body.previous_response_id);
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
        events.map((e) => (RESPONSES_TERMINAL_EVENTS.has(e.type) ? { event: e.type, data: e, usageAt: "response.usage" } : { event: e.type, data: e }));
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
    if (store && finished) await responses.save(accountId, finished.response.id, plan.beforeStore ? plan.beforeStore(finished) : finished);
  };
  return plan;
}
