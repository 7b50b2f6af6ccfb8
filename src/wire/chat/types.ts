// OpenAI Chat Completions wire types: the gateway's interchange format. Fields the API marks optional
// are optional here; the request and message objects keep unknown fields so same-format proxying loses nothing.

export type ChatFinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "function_call";

export type ChatReasoningEffort = "none" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

/**
 * Anthropic's prompt-cache marker, carried on Chat content parts, tools and messages the way
 * LiteLLM and OpenRouter accept it (docs/clients.md, "Prompt caching").
 */
export interface ChatCacheControl {
  type: "ephemeral";
  ttl?: "5m" | "1h";
}

export interface ChatTextPart {
  type: "text";
  text: string;
  cache_control?: ChatCacheControl;
}

export interface ChatImagePart {
  type: "image_url";
  image_url: { url: string; detail?: "auto" | "low" | "high" };
}

export interface ChatAudioPart {
  type: "input_audio";
  input_audio: { data: string; format: "wav" | "mp3" };
}

export interface ChatFilePart {
  type: "file";
  file: { file_id?: string; file_data?: string; filename?: string };
}

export interface ChatRefusalPart {
  type: "refusal";
  refusal: string;
}

export type ChatUserContentPart = ChatTextPart | ChatImagePart | ChatAudioPart | ChatFilePart;
export type ChatAssistantContentPart = ChatTextPart | ChatRefusalPart;

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface ChatSystemMessage {
  role: "system";
  content: string | ChatTextPart[];
  name?: string;
  cache_control?: ChatCacheControl;
}

export interface ChatDeveloperMessage {
  role: "developer";
  content: string | ChatTextPart[];
  name?: string;
}

export interface ChatUserMessage {
  role: "user";
  content: string | ChatUserContentPart[];
  name?: string;
}

export interface ChatAssistantMessage {
  role: "assistant";
  content?: string | ChatAssistantContentPart[] | null;
  tool_calls?: ChatToolCall[];
  refusal?: string | null;
  name?: string;
  /** Reasoning text (DeepSeek's and vLLM's field): shown, never sent to Anthropic without its signature. */
  reasoning_content?: string | null;
  thinking_blocks?: ChatThinkingBlock[];
}

export interface ChatToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string | ChatTextPart[];
}

/**
 * Anthropic's signed thinking, carried on Chat assistant messages as `thinking_blocks` (the field
 * LiteLLM uses) so that a continued tool loop can send it back verbatim (docs/clients.md, "Reasoning").
 */
export type ChatThinkingBlock = { type: "thinking"; thinking: string; signature: string } | { type: "redacted_thinking"; data: string };

export type ChatMessage = ChatSystemMessage | ChatDeveloperMessage | ChatUserMessage | ChatAssistantMessage | ChatToolMessage;

export interface ChatFunctionDefinition {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
  strict?: boolean | null;
}

export interface ChatFunctionTool {
  type: "function";
  function: ChatFunctionDefinition;
  cache_control?: ChatCacheControl;
}

export interface ChatCustomTool {
  type: "custom";
  custom: { name: string; description?: string; format?: unknown };
}

export type ChatTool = ChatFunctionTool | ChatCustomTool;

export interface ChatNamedToolChoice {
  type: "function";
  function: { name: string };
}

export interface ChatAllowedToolsChoice {
  type: "allowed_tools";
  allowed_tools: { mode: "auto" | "required"; tools: ChatNamedToolChoice[] };
}

export type ChatToolChoice = "none" | "auto" | "required" | ChatNamedToolChoice | { type: "custom"; custom: { name: string } } | ChatAllowedToolsChoice;

export type ChatResponseFormat =
  | { type: "text" }
  | { type: "json_object" }
  | {
      type: "json_schema";
      json_schema: { name: string; description?: string; schema?: Record<string, unknown>; strict?: boolean | null };
    };

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean; include_obfuscation?: boolean } | null;
  n?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  stop?: string | string[] | null;
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  parallel_tool_calls?: boolean;
  response_format?: ChatResponseFormat;
  reasoning_effort?: ChatReasoningEffort | null;
  user?: string;
  safety_identifier?: string;
  prompt_cache_key?: string;
  metadata?: Record<string, string> | null;
  /** Pass-through of fields this gateway does not interpret (seed, logprobs, service_tier, ...). */
  [key: string]: unknown;
}

/**
 * Billable usage the Chat wire has no field for, carried with a ChatUsage inside the gateway (an
 * upstream translated to Chat and read by usageFromChat). A symbol key: JSON.stringify leaves it out,
 * so a client never sees it; object spread keeps it.
 */
export const USAGE_EXTRAS: unique symbol = Symbol("gateway.usageExtras");

export interface ChatUsageExtras {
  /** The part of prompt_tokens_details.cache_write_tokens written for 1 hour (the rest: 5 minutes). */
  cacheWrite1hTokens?: number;
  /** Provider-side web search calls. */
  webSearchCalls?: number;
}

export interface ChatUsage {
  [USAGE_EXTRAS]?: ChatUsageExtras;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: {
    cached_tokens?: number;
    cache_write_tokens?: number;
    audio_tokens?: number;
  } | null;
  completion_tokens_details?: {
    reasoning_tokens?: number;
    audio_tokens?: number;
    accepted_prediction_tokens?: number;
    rejected_prediction_tokens?: number;
  } | null;
}

export interface ChatResponseMessage {
  role: "assistant";
  content: string | null;
  refusal?: string | null;
  tool_calls?: ChatToolCall[];
  annotations?: unknown[];
  reasoning_content?: string | null;
  thinking_blocks?: ChatThinkingBlock[];
}

export interface ChatChoice {
  index: number;
  message: ChatResponseMessage;
  finish_reason: ChatFinishReason | null;
  logprobs?: unknown;
  /** vLLM-style extension: the stop string that ended generation, when one did. */
  stop_reason?: string | number | null;
}

export interface ChatCompletion {
  id: string;
  object: "chat.completion";
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: ChatUsage | null;
  service_tier?: string | null;
  system_fingerprint?: string | null;
}

export interface ChatToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

export interface ChatChunkDelta {
  role?: "assistant";
  content?: string | null;
  refusal?: string | null;
  tool_calls?: ChatToolCallDelta[];
  reasoning_content?: string | null;
  /** Each complete thinking block once, when it ends: its signature is only known then. */
  thinking_blocks?: ChatThinkingBlock[];
}

export interface ChatChunkChoice {
  index: number;
  delta: ChatChunkDelta;
  finish_reason: ChatFinishReason | null;
  logprobs?: unknown;
  stop_reason?: string | number | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: "chat.completion.chunk";
  created: number;
  model: string;
  choices: ChatChunkChoice[];
  usage?: ChatUsage | null;
  service_tier?: string | null;
  system_fingerprint?: string | null;
}

/** In-band error payload of a Chat stream: sent as `data: {"error":{...}}` instead of a chunk. */
export interface ChatStreamError {
  error: { message: string; type: string; param: string | null; code: string | null };
}
