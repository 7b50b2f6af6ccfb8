// Anthropic Messages wire types (request, response, stream events). Optional where the API is;
// request objects keep unknown fields because Claude Code sends many this gateway does not translate.

export type AnthropicStopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "pause_turn" | "refusal" | "model_context_window_exceeded";

export interface AnthropicTextBlockParam {
  type: "text";
  text: string;
  cache_control?: unknown;
  citations?: unknown;
}

export type AnthropicImageSource = { type: "base64"; media_type: string; data: string } | { type: "url"; url: string } | { type: "file"; file_id: string };

export interface AnthropicImageBlockParam {
  type: "image";
  source: AnthropicImageSource;
  cache_control?: unknown;
}

export interface AnthropicDocumentBlockParam {
  type: "document";
  source: { type: string; media_type?: string; data?: string; url?: string; [key: string]: unknown };
  title?: string | null;
  cache_control?: unknown;
}

export interface AnthropicToolUseBlockParam {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
  cache_control?: unknown;
}

export interface AnthropicToolResultBlockParam {
  type: "tool_result";
  tool_use_id: string;
  content?: string | Array<AnthropicTextBlockParam | AnthropicImageBlockParam | { type: string; [key: string]: unknown }>;
  is_error?: boolean;
  cache_control?: unknown;
}

export interface AnthropicThinkingBlockParam {
  type: "thinking";
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlockParam {
  type: "redacted_thinking";
  data: string;
}

export type AnthropicContentBlockParam =
  | AnthropicTextBlockParam
  | AnthropicImageBlockParam
  | AnthropicDocumentBlockParam
  | AnthropicToolUseBlockParam
  | AnthropicToolResultBlockParam
  | AnthropicThinkingBlockParam
  | AnthropicRedactedThinkingBlockParam;

export interface AnthropicMessageParam {
  /** "system" is not in the documented API but Claude Code sends it; it is accepted on input. */
  role: "user" | "assistant" | "system";
  content: string | AnthropicContentBlockParam[];
}

export interface AnthropicTool {
  name: string;
  /** Absent or "custom" for client tools; versioned names (e.g. "web_search_20250305") for server tools. */
  type?: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  strict?: boolean;
  cache_control?: unknown;
  [key: string]: unknown;
}

export type AnthropicToolChoice =
  | { type: "auto"; disable_parallel_tool_use?: boolean }
  | { type: "any"; disable_parallel_tool_use?: boolean }
  | { type: "tool"; name: string; disable_parallel_tool_use?: boolean }
  | { type: "none" };

export interface AnthropicMessagesRequest {
  model: string;
  max_tokens: number;
  messages: AnthropicMessageParam[];
  system?: string | AnthropicTextBlockParam[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  stop_sequences?: string[];
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id?: string | null };
  /** thinking, output_config, context_management, service_tier, container, ...: not translated. */
  [key: string]: unknown;
}

export interface AnthropicTextBlock {
  type: "text";
  text: string;
  /** Left out by the gateway (no citations): some clients (the AI SDK) refuse null there. */
  citations?: unknown[];
}

export interface AnthropicToolUseBlock {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
}

export interface AnthropicThinkingBlock {
  type: "thinking";
  thinking: string;
  signature: string;
}

export interface AnthropicRedactedThinkingBlock {
  type: "redacted_thinking";
  data: string;
}

export type AnthropicContentBlock = AnthropicTextBlock | AnthropicToolUseBlock | AnthropicThinkingBlock | AnthropicRedactedThinkingBlock;

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
}

export interface AnthropicMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: AnthropicContentBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

export interface AnthropicMessageStartEvent {
  type: "message_start";
  message: AnthropicMessage;
}

export interface AnthropicContentBlockStartEvent {
  type: "content_block_start";
  index: number;
  content_block: AnthropicContentBlock;
}

export type AnthropicBlockDelta =
  | { type: "text_delta"; text: string }
  | { type: "input_json_delta"; partial_json: string }
  | { type: "thinking_delta"; thinking: string }
  | { type: "signature_delta"; signature: string }
  | { type: "citations_delta"; citation: unknown };

export interface AnthropicContentBlockDeltaEvent {
  type: "content_block_delta";
  index: number;
  delta: AnthropicBlockDelta;
}

export interface AnthropicContentBlockStopEvent {
  type: "content_block_stop";
  index: number;
}

export interface AnthropicMessageDeltaEvent {
  type: "message_delta";
  delta: { stop_reason: AnthropicStopReason | null; stop_sequence: string | null };
  /** Cumulative counts: overwrite, never add. */
  usage: {
    output_tokens: number;
    input_tokens?: number | null;
    cache_creation_input_tokens?: number | null;
    cache_read_input_tokens?: number | null;
  };
}

export interface AnthropicMessageStopEvent {
  type: "message_stop";
}

export interface AnthropicPingEvent {
  type: "ping";
}

export interface AnthropicErrorEvent {
  type: "error";
  error: { type: string; message: string };
}

export type AnthropicStreamEvent =
  | AnthropicMessageStartEvent
  | AnthropicContentBlockStartEvent
  | AnthropicContentBlockDeltaEvent
  | AnthropicContentBlockStopEvent
  | AnthropicMessageDeltaEvent
  | AnthropicMessageStopEvent
  | AnthropicPingEvent
  | AnthropicErrorEvent;
