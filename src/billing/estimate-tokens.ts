// Deterministic token estimates for billing when an upstream reports no usage (aborted stream,
// provider that omits usage). Pure and tokenizer-free: the same input always bills the same.
//
// Method:
// - Text: characters in Latin scripts (U+0000–U+024F, U+1E00–U+1EFF) and general punctuation
//   (U+2000–U+206F, e.g. curly quotes) count 1/4 token each, the usual ~4 characters per token of
//   BPE tokenizers on English and code. Every other character (CJK, kana, Hangul, Cyrillic, Arabic,
//   emoji, …) counts 1 token: those scripts tokenize at roughly one token per character or worse.
//   A surrogate pair is one character. The sum is rounded up, so non-empty text is at least 1.
// - Chat prompt: 4 tokens per message (role and framing), plus its text: string content, text
//   parts, `name`, `refusal`, and each tool call's function name and arguments. An image part
//   counts a fixed 765 tokens (OpenAI's cost of a 1024x1024 high-detail image: 85 + 4 x 170).
//   Audio and file parts count nothing: their size is not knowable from the request alone.
//   Each piece of text is estimated on its own and the results are summed.

export const TOKENS_PER_MESSAGE = 4;
export const TOKENS_PER_IMAGE = 765;

/** ~4 Latin characters per token, 1 token per other character; ceil; 0 only for "". */
export function estimateTextTokens(text: string): number {
  if (typeof text !== "string" || text.length === 0) return 0;
  const counter = new TextTokenCounter();
  counter.add(text);
  return counter.tokens();
}

/**
 * estimateTextTokens over text that arrives in pieces (a stream's output), in time proportional to
 * the new piece: tokens() after add(a), add(b) is estimateTextTokens(a + b), except for a surrogate
 * pair split between two pieces, which counts as two characters (the estimate only rises).
 */
export class TextTokenCounter {
  #latin = 0;
  #other = 0;

  add(text: string): void {
    const length = text.length;
    for (let i = 0; i < length; i++) {
      const code = text.charCodeAt(i);
      if (code < 0x250 || (code >= 0x1e00 && code <= 0x1eff) || (code >= 0x2000 && code <= 0x206f)) {
        this.#latin++;
      } else {
        this.#other++;
        // A high surrogate followed by a low one is one character (emoji, rare CJK).
        if (code >= 0xd800 && code <= 0xdbff && i + 1 < length) {
          const next = text.charCodeAt(i + 1);
          if (next >= 0xdc00 && next <= 0xdfff) i++;
        }
      }
    }
  }

  tokens(): number {
    return Math.ceil((this.#latin + 4 * this.#other) / 4);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function textTokens(value: unknown): number {
  return typeof value === "string" ? estimateTextTokens(value) : 0;
}

const IMAGE_PART_TYPES = new Set(["image_url", "input_image", "image"]);

function contentTokens(content: unknown): number {
  if (typeof content === "string") return estimateTextTokens(content);
  if (!Array.isArray(content)) return 0;
  let total = 0;
  for (const part of content) {
    if (typeof part === "string") total += estimateTextTokens(part);
    else if (isRecord(part)) {
      if (typeof part.type === "string" && IMAGE_PART_TYPES.has(part.type)) total += TOKENS_PER_IMAGE;
      else total += textTokens(part.text) + textTokens(part.refusal);
    }
  }
  return total;
}

function functionTokens(fn: unknown): number {
  return isRecord(fn) ? textTokens(fn.name) + textTokens(fn.arguments) : 0;
}

/** Estimate for a Chat Completions `messages` array; anything that is not an array counts 0. */
export function estimateChatPromptTokens(messages: unknown): number {
  if (!Array.isArray(messages)) return 0;
  let total = 0;
  for (const message of messages) {
    if (!isRecord(message)) continue;
    total += TOKENS_PER_MESSAGE;
    total += contentTokens(message.content);
    total += textTokens(message.name) + textTokens(message.refusal);
    if (Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls) if (isRecord(call)) total += functionTokens(call.function);
    }
    total += functionTokens(message.function_call); // legacy single function call
  }
  return total;
}
