// Chat Completions clients: pass-through to OpenAI-compatible upstreams (model renamed, usage always
// requested), or translated both ways for Anthropic-native upstreams.
import type { ModelConfig } from "../../config/load.js";
import type { SseEvent } from "../../core/sse.js";
import {
  convertChatRequestToMessages,
  convertMessagesResponseToChat,
  MessagesEventsToChatStream,
  type AnthropicMessage,
  type AnthropicStreamEvent,
} from "../../formats/anthropic-messages/index.js";
import type { ChatCompletion, ChatCompletionChunk } from "../../formats/openai-chat/index.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../plan.js";
import { parseEventJson, usageFromChat } from "./usage.js";

type Json = Record<string, unknown>;

function clientAskedForUsage(body: Json): boolean {
  const options = body.stream_options;
  return !!options && typeof options === "object" && (options as Json).include_usage === true;
}

/** Collects delivered text and tool arguments for estimates when the upstream reports no usage. */
class DeliveredText {
  #parts: string[] = [];
  addChunk(chunk: ChatCompletionChunk): void {
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta;
      if (!delta) continue;
      if (typeof delta.content === "string") this.#parts.push(delta.content);
      for (const call of delta.tool_calls ?? []) {
        if (call.function?.name) this.#parts.push(call.function.name);
        if (call.function?.arguments) this.#parts.push(call.function.arguments);
      }
    }
  }
  text(): string {
    return this.#parts.join("");
  }
}

export function chatToOpenAiChat(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  const wantsUsage = clientAskedForUsage(body);
  const upstreamBody: Json = { ...body, model: model.upstreamModel };
  if (stream) upstreamBody.stream_options = { ...(body.stream_options as Json | undefined), include_usage: true };
  return {
    path: "/chat/completions",
    body: upstreamBody,
    stream,
    warnings: [],
    fromUpstream(json) {
      const completion = json as ChatCompletion;
      return { body: { ...completion, model: model.id }, usage: usageFromChat(completion.usage) };
    },
    streamTranslator(): StreamTranslator {
      const delivered = new DeliveredText();
      let usage: ReturnType<typeof usageFromChat> = null;
      return {
        push(event: SseEvent): ClientFrame[] {
          if (event.data === "[DONE]") return [];
          const chunk = parseEventJson(event.data) as ChatCompletionChunk & { error?: unknown };
          if (chunk.error) return [{ data: chunk }];
          if (chunk.usage) usage = usageFromChat(chunk.usage);
          // The usage chunk we asked for on the client's behalf is not shown to a client that did not.
          if (!wantsUsage && chunk.usage && (chunk.choices?.length ?? 0) === 0) return [];
          delivered.addChunk(chunk);
          const out: Json = { ...chunk, model: model.id };
          if (!wantsUsage) delete out.usage;
          return [{ data: out }];
        },
        end: () => [{ data: "[DONE]", raw: true }],
        fail: (type, message) => [{ data: { error: { message, type, param: null, code: type } } }],
        reportedUsage: () => usage,
        deliveredText: () => delivered.text(),
      };
    },
  };
}

export function chatToAnthropic(body: Json, model: ModelConfig): UpstreamPlan {
  const stream = body.stream === true;
  const wantsUsage = clientAskedForUsage(body);
  const { request, warnings } = convertChatRequestToMessages(body, { defaultMaxTokens: model.defaultOutputTokens });
  return {
    path: "/v1/messages",
    body: { ...request, model: model.upstreamModel, stream },
    stream,
    warnings,
    fromUpstream(json) {
      const completion = convertMessagesResponseToChat(json as AnthropicMessage, { model: model.id });
      return { body: completion, usage: usageFromChat(completion.usage) };
    },
    streamTranslator(): StreamTranslator {
      const machine = new MessagesEventsToChatStream({ model: model.id });
      const delivered = new DeliveredText();
      let usage: ReturnType<typeof usageFromChat> = null;
      const toFrames = (items: ReturnType<MessagesEventsToChatStream["push"]>): ClientFrame[] => {
        const frames: ClientFrame[] = [];
        for (const item of items) {
          if ("error" in item) {
            frames.push({ data: item });
            continue;
          }
          if (item.usage && item.choices.length === 0) {
            usage = usageFromChat(item.usage);
            if (!wantsUsage) continue;
          }
          delivered.addChunk(item);
          frames.push({ data: item });
        }
        return frames;
      };
      return {
        push: (event) => toFrames(machine.push(parseEventJson(event.data) as AnthropicStreamEvent)),
        end: () => [...toFrames(machine.finish()), { data: "[DONE]", raw: true }],
        fail: (type, message) => toFrames(machine.abort(message, type)),
        reportedUsage: () => usage,
        deliveredText: () => delivered.text(),
      };
    },
  };
}
