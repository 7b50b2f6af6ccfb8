// Gemini GenerateContentResponse -> Chat Completions response (buffered), and the pieces the stream
// translator shares: the finish reason, the text and call parts of a candidate, and call ids.
import { createHash } from "node:crypto";
import type { ChatCompletion, ChatFinishReason, ChatResponseMessage, ChatToolCall } from "../../wire/chat/types.js";
import { deriveId, nowSeconds, randomIdSuffix } from "../../wire/shared/ids.js";
import { isRecord, isString } from "../../wire/shared/narrow.js";
import { convertGeminiUsageToChat } from "./convert-usage.js";
import type { GeminiCandidate, GeminiResponse } from "../../wire/gemini/types.js";

export interface GeminiToChatOptions {
  /** Chat id; random when absent (Gemini's responseId names the upstream request and is not shown). */
  id?: string;
  /** Unix seconds; now when absent. */
  created?: number;
  /** Model name to report. */
  model: string;
  /** Seed of the tool call ids; random when absent (fixed in golden tests). */
  callIdSeed?: string;
}

const CONTENT_FILTER_REASONS = new Set(["SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"]);

/** STOP -> stop (tool_calls when the answer calls functions), MAX_TOKENS -> length, the safety family -> content_filter. */
export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): ChatFinishReason {
  if (reason === "MAX_TOKENS") return "length";
  if (reason !== undefined && CONTENT_FILTER_REASONS.has(reason)) return "content_filter";
  return hasToolCalls ? "tool_calls" : "stop";
}

/**
 * Ids for the calls of one answer. Gemini names no calls: an id is derived from a per-answer seed,
 * the call's position and its name, so the same call has the same id wherever it is sent, and the
 * tool message that answers it is matched back by the name the id was given with.
 */
export class ToolCallIds {
  constructor(private readonly seed: string = randomIdSuffix()) {}
  idFor(position: number, name: string): string {
    return `call_${createHash("sha256").update(`${this.seed}\n${position}\n${name}`).digest("hex").slice(0, 24)}`;
  }
}

export interface CandidateOutput {
  text: string;
  /** The thought summaries' text (parts with `thought: true`): reasoning, never content. */
  reasoning: string;
  calls: Array<{ name: string; arguments: string }>;
}

/** A candidate's visible text, its thought summaries and its function calls, arguments as JSON text. */
export function readCandidate(candidate: GeminiCandidate | undefined): CandidateOutput {
  const out: CandidateOutput = { text: "", reasoning: "", calls: [] };
  for (const part of candidate?.content?.parts ?? []) {
    if (!isRecord(part)) continue;
    if (part.thought === true) {
      if (isString(part.text)) out.reasoning += part.text;
      continue;
    }
    if (isString(part.text)) out.text += part.text;
    const call = part.functionCall;
    if (isRecord(call) && isString(call.name)) out.calls.push({ name: call.name, arguments: JSON.stringify(isRecord(call.args) ? call.args : {}) });
  }
  return out;
}

/** The finish reason of an answer with no candidate: its prompt was blocked. */
export function blockedPrompt(response: GeminiResponse): boolean {
  return (response.candidates?.length ?? 0) === 0 && isString(response.promptFeedback?.blockReason);
}

export function convertGeminiResponseToChat(response: GeminiResponse, options: GeminiToChatOptions): ChatCompletion {
  const candidate = response.candidates?.[0];
  const { text, reasoning, calls } = readCandidate(candidate);
  const ids = new ToolCallIds(options.callIdSeed);
  const toolCalls: ChatToolCall[] = calls.map((call, i) => ({ id: ids.idFor(i, call.name), type: "function", function: call }));
  const message: ChatResponseMessage = { role: "assistant", content: text !== "" ? text : toolCalls.length > 0 ? null : "", refusal: null };
  if (reasoning !== "") message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const finishReason = blockedPrompt(response) ? "content_filter" : mapFinishReason(candidate?.finishReason, toolCalls.length > 0);
  return {
    id: options.id ?? deriveId(undefined, [], "chatcmpl-"),
    object: "chat.completion",
    created: options.created ?? nowSeconds(),
    model: options.model,
    choices: [{ index: 0, message, finish_reason: finishReason, logprobs: null }],
    usage: convertGeminiUsageToChat(response.usageMetadata),
  };
}
