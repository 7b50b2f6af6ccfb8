// Reasoning across formats: the effort <-> Anthropic thinking budget table, and Anthropic's signed
// thinking blocks as Chat carries them (`thinking_blocks`) and as Responses carries them (a reasoning
// item's `encrypted_content`). Documented in docs/clients.md, "Reasoning".
import { invalidRequest } from "../../errors/catalogue.js";
import type { ChatReasoningEffort, ChatThinkingBlock } from "../chat/types.js";
import { isRecord, isString } from "./narrow.js";

/** Anthropic's smallest accepted thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

/** budget_tokens per effort; "none" turns thinking off. */
export const THINKING_BUDGET_BY_EFFORT: Readonly<Record<Exclude<ChatReasoningEffort, "none">, number>> = {
  minimal: 1024,
  low: 4096,
  medium: 8192,
  high: 16384,
  xhigh: 32768,
  max: 32768,
};

export function isReasoningEffort(value: unknown): value is ChatReasoningEffort {
  return value === "none" || (isString(value) && Object.hasOwn(THINKING_BUDGET_BY_EFFORT, value));
}

/**
 * The effort for an OpenAI upstream from an Anthropic budget: the largest of low, medium and high
 * whose table budget fits in it (minimal and xhigh are not taken by every OpenAI model).
 */
export function effortForThinkingBudget(budget: number): "low" | "medium" | "high" {
  if (budget >= THINKING_BUDGET_BY_EFFORT.high) return "high";
  if (budget >= THINKING_BUDGET_BY_EFFORT.medium) return "medium";
  return "low";
}

/** More blocks than this in one assistant message is not a real turn. */
const MAX_THINKING_BLOCKS = 256;

/** A client's thinking blocks, validated: each must be sent back exactly as the upstream produced it. */
export function readThinkingBlocks(value: unknown, path: string): ChatThinkingBlock[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalidRequest(path, `${path} must be an array of thinking blocks.`);
  if (value.length > MAX_THINKING_BLOCKS) throw invalidRequest(path, `${path} holds more than ${MAX_THINKING_BLOCKS} blocks.`);
  return value.map((block: unknown, i: number): ChatThinkingBlock => {
    const at = `${path}[${i}]`;
    if (isRecord(block) && block.type === "thinking" && isString(block.thinking) && isString(block.signature)) {
      return { type: "thinking", thinking: block.thinking, signature: block.signature };
    }
    if (isRecord(block) && block.type === "redacted_thinking" && isString(block.data)) return { type: "redacted_thinking", data: block.data };
    throw invalidRequest(at, `${at} must be {type: "thinking", thinking, signature} or {type: "redacted_thinking", data}.`);
  });
}

/** Marks encrypted_content written by this gateway (other providers' reasoning cannot be sent to Anthropic). */
const ENCRYPTED_CONTENT_PREFIX = "gw-thinking-v1.";

/**
 * Thinking blocks as a Responses reasoning item's encrypted_content. Not encrypted: the thinking text
 * is already in the item's summary, redacted data is Anthropic's ciphertext, and Anthropic checks the
 * signatures, so an edited block is refused upstream.
 */
export function encodeThinkingBlocks(blocks: readonly ChatThinkingBlock[]): string {
  return ENCRYPTED_CONTENT_PREFIX + Buffer.from(JSON.stringify(blocks), "utf8").toString("base64url");
}

/** The blocks in an encrypted_content this gateway wrote; null for other providers' content. */
export function decodeThinkingBlocks(value: unknown, path: string): ChatThinkingBlock[] | null {
  if (!isString(value) || !value.startsWith(ENCRYPTED_CONTENT_PREFIX)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value.slice(ENCRYPTED_CONTENT_PREFIX.length), "base64url").toString("utf8"));
  } catch {
    throw invalidRequest(path, `${path} is damaged: send the reasoning item back as it was received.`);
  }
  return readThinkingBlocks(parsed, path);
}
