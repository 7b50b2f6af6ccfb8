// Google Gemini API (generativelanguage.googleapis.com, v1beta) wire types for generateContent and
// streamGenerateContent: only the fields the gateway reads or writes. Every response field is optional.
// Spoken on both sides (the gemini upstream type and the Gemini client format), so they live in wire/.

export interface GeminiFunctionCall {
  name: string;
  args?: Record<string, unknown>;
  /** Set by some deployments; the Gemini API usually leaves calls without ids. */
  id?: string;
}

export interface GeminiFunctionResponse {
  name: string;
  response: Record<string, unknown>;
  /** The id of the call it answers, when the call had one. */
  id?: string;
}

export interface GeminiPart {
  text?: string;
  /** A thought summary part (includeThoughts): never shown as content. */
  thought?: boolean;
  /** Opaque; Gemini 3 requires the one of a function call to come back with it in the history. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: GeminiFunctionCall;
  functionResponse?: GeminiFunctionResponse;
}

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

/** The OpenAPI 3.0 subset Gemini accepts in functionDeclarations.parameters and responseSchema. */
export type GeminiSchema = Record<string, unknown>;

export interface GeminiFunctionDeclaration {
  name: string;
  description?: string;
  parameters?: GeminiSchema;
}

export interface GeminiTool {
  functionDeclarations: GeminiFunctionDeclaration[];
}

export interface GeminiToolConfig {
  functionCallingConfig: { mode: "AUTO" | "ANY" | "NONE"; allowedFunctionNames?: string[] };
}

export interface GeminiThinkingConfig {
  /** Tokens the model may think; 0 turns thinking off where the model allows it. */
  thinkingBudget: number;
  /** Send thought summaries back as parts with `thought: true`. */
  includeThoughts?: boolean;
}

export interface GeminiGenerationConfig {
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
  seed?: number;
  presencePenalty?: number;
  frequencyPenalty?: number;
  responseMimeType?: string;
  responseSchema?: GeminiSchema;
  thinkingConfig?: GeminiThinkingConfig;
}

export interface GeminiRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: Array<{ text: string }> };
  tools?: GeminiTool[];
  toolConfig?: GeminiToolConfig;
  generationConfig?: GeminiGenerationConfig;
}

export type GeminiFinishReason =
  | "FINISH_REASON_UNSPECIFIED"
  | "STOP"
  | "MAX_TOKENS"
  | "SAFETY"
  | "RECITATION"
  | "LANGUAGE"
  | "OTHER"
  | "BLOCKLIST"
  | "PROHIBITED_CONTENT"
  | "SPII"
  | "MALFORMED_FUNCTION_CALL"
  | "IMAGE_SAFETY"
  | "UNEXPECTED_TOOL_CALL"
  | (string & {});

export interface GeminiCandidate {
  content?: { role?: string; parts?: GeminiPart[] };
  finishReason?: GeminiFinishReason;
  index?: number;
}

/** The answer to countTokens. */
export interface GeminiCountTokensResponse {
  totalTokens: number;
}

/** One entry of GET /v1beta/models (Google's Model resource, the fields the gateway knows). */
export interface GeminiModel {
  name: string;
  baseModelId: string;
  version: string;
  displayName: string;
  inputTokenLimit?: number;
  outputTokenLimit?: number;
  supportedGenerationMethods: string[];
}

export interface GeminiUsageMetadata {
  /** The whole prompt, cached content included. */
  promptTokenCount?: number;
  /** The part of the prompt served from a context cache. */
  cachedContentTokenCount?: number;
  /** The answer's tokens, thoughts excluded. */
  candidatesTokenCount?: number;
  /** Thinking tokens, billed as output. */
  thoughtsTokenCount?: number;
  /** Prompt tokens of built-in tools (search grounding, code execution), billed as input. */
  toolUsePromptTokenCount?: number;
  totalTokenCount?: number;
}

export interface GeminiResponse {
  candidates?: GeminiCandidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: GeminiUsageMetadata;
  modelVersion?: string;
  /** An upstream request identifier: never shown to the client. */
  responseId?: string;
}

/** A Gemini error body (google.rpc.Status), also sent in-band on a stream. */
export interface GeminiErrorBody {
  error: { code?: number; message?: string; status?: string; details?: unknown[] };
}
