// Bedrock Runtime Converse wire types (request, response, ConverseStream events), as far as the
// gateway translates them. Union members are objects with exactly one key, as the API defines them.

export type ConverseImageFormat = "png" | "jpeg" | "gif" | "webp";

export type ConverseContentBlock =
  | { text: string }
  | { image: { format: ConverseImageFormat; source: { bytes: string } } }
  | { document: { format: "pdf"; name: string; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: Array<{ text: string }>; status?: "success" | "error" } }
  | { reasoningContent: ConverseReasoningContent };

/** A reasoning block: readable text with its signature, or the provider's encrypted (redacted) reasoning. */
export type ConverseReasoningContent = { reasoningText: { text: string; signature?: string } } | { redactedContent: string };

export interface ConverseMessage {
  role: "user" | "assistant";
  content: ConverseContentBlock[];
}

export interface ConverseToolSpec {
  toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } };
}

export type ConverseToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: Array<{ text: string }>;
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: ConverseToolSpec[]; toolChoice?: ConverseToolChoice };
  /** Fields passed to the model as they are: the thinking object of Claude models. */
  additionalModelRequestFields?: { thinking?: { type: "enabled"; budget_tokens: number } };
}

export type ConverseStopReason = "end_turn" | "tool_use" | "max_tokens" | "stop_sequence" | "guardrail_intervened" | "content_filtered" | (string & {});

export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
  /** The cache writes by lifetime (Claude models), 1h before 5m. */
  cacheDetails?: Array<{ ttl?: string; inputTokens?: number }>;
}

export interface ConverseResponse {
  output?: { message?: { role?: string; content?: Array<Record<string, unknown>> } };
  stopReason?: ConverseStopReason;
  usage?: ConverseUsage;
  metrics?: { latencyMs?: number };
}

/** One ConverseStream event: its `:event-type` and its JSON payload. */
export type ConverseStreamEvent =
  | { type: "messageStart"; payload: { role?: string } }
  | { type: "contentBlockStart"; payload: { contentBlockIndex?: number; start?: { toolUse?: { toolUseId?: string; name?: string } } } }
  | {
      type: "contentBlockDelta";
      payload: {
        contentBlockIndex?: number;
        delta?: { text?: string; toolUse?: { input?: string }; reasoningContent?: { text?: string; signature?: string; redactedContent?: string } };
      };
    }
  | { type: "contentBlockStop"; payload: { contentBlockIndex?: number } }
  | { type: "messageStop"; payload: { stopReason?: ConverseStopReason } }
  | { type: "metadata"; payload: { usage?: ConverseUsage; metrics?: { latencyMs?: number } } };
