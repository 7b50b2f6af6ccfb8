// Stop reason <-> finish reason, both directions (wire-formats.md §3.7 table).
import type { ChatFinishReason } from "../chat/types.js";
import type { AnthropicStopReason } from "./types.js";

/**
 * Chat finish_reason -> Anthropic stop_reason. `matchedStop` is the vLLM-style `stop_reason` string when
 * the upstream says which stop sequence matched; plain OpenAI never does, so that case is end_turn.
 */
export function mapFinishReasonToStopReason(
  finishReason: string | null | undefined,
  options: { matchedStop?: unknown; hasToolCalls?: boolean } = {},
): { stopReason: AnthropicStopReason; stopSequence: string | null } {
  switch (finishReason) {
    case "length":
      return { stopReason: "max_tokens", stopSequence: null };
    case "tool_calls":
    case "function_call":
      return { stopReason: "tool_use", stopSequence: null };
    case "content_filter":
      return { stopReason: "refusal", stopSequence: null };
    default:
      // Some upstreams say "stop" after tool calls; the client's agent loop keys on tool_use.
      if (options.hasToolCalls === true) return { stopReason: "tool_use", stopSequence: null };
      if (typeof options.matchedStop === "string" && options.matchedStop !== "") {
        return { stopReason: "stop_sequence", stopSequence: options.matchedStop };
      }
      return { stopReason: "end_turn", stopSequence: null };
  }
}

export function mapStopReasonToFinishReason(stopReason: string | null | undefined): ChatFinishReason {
  switch (stopReason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "stop";
  }
}
