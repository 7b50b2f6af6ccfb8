// A client format served by a Chat-level plan: the upstream plan speaks Chat Completions (to an
// OpenAI-compatible or, through its own translation, an Anthropic upstream), and a ChatBridge
// turns Chat output into the client's format. Formats x providers cost 3 + N translators.
import type { ChatCompletion, ChatCompletionChunk } from "../wire/chat/index.js";
import type { ClientFrame, StreamTranslator, UpstreamPlan } from "../upstreams/plan.js";

export interface ChatStreamBridge {
  push(chunk: ChatCompletionChunk): ClientFrame[];
  finish(): ClientFrame[];
  abort(type: string, message: string): ClientFrame[];
}

export interface ChatBridge {
  fromChatCompletion(completion: ChatCompletion): unknown;
  stream(): ChatStreamBridge;
}

export function bridgeOverChat(inner: UpstreamPlan, bridge: ChatBridge, warnings: string[]): UpstreamPlan {
  return {
    path: inner.path,
    body: inner.body,
    stream: inner.stream,
    warnings: [...warnings, ...inner.warnings],
    ...(inner.outputLimit !== undefined && { outputLimit: inner.outputLimit }),
    fromUpstream(json) {
      const chat = inner.fromUpstream(json);
      return { body: bridge.fromChatCompletion(chat.body as ChatCompletion), usage: chat.usage };
    },
    streamTranslator(): StreamTranslator {
      const chat = inner.streamTranslator();
      const chatStop = chat.stopAtLimit;
      const outer = bridge.stream();
      let failed = false;
      const relay = (frames: ClientFrame[]): ClientFrame[] => {
        const out: ClientFrame[] = [];
        for (const frame of frames) {
          if (frame.raw || failed) continue; // [DONE]: the outer format has its own end
          const data = (frame.jsonText ? JSON.parse(String(frame.data)) : frame.data) as ChatCompletionChunk & { error?: { message?: string; type?: string } };
          if (data.error) {
            failed = true;
            out.push(...outer.abort(data.error.type ?? "provider_error", data.error.message ?? "The upstream stream failed."));
            continue;
          }
          out.push(...outer.push(data));
        }
        return out;
      };
      return {
        push: (event) => relay(chat.push(event)),
        end: () => {
          const out = relay(chat.end());
          return failed ? out : [...out, ...outer.finish()];
        },
        ...(chatStop && {
          stopAtLimit: () => {
            // The Chat length stop, through the outer format (stop_reason max_tokens, incomplete_details).
            const out = relay(chatStop());
            return failed ? out : [...out, ...outer.finish()];
          },
        }),
        fail: (type, message) => {
          if (failed) return [];
          failed = true;
          return outer.abort(type, message);
        },
        reportedUsage: () => chat.reportedUsage(),
        deliveredText: () => chat.deliveredText(),
      };
    },
  };
}
