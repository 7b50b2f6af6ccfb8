// The text parts of a request or an answer in any client format, found by the fields that hold
// text in every one of them: Chat's messages[].content (a string or parts' text) and tool-call
// arguments, Responses' input and instructions, Messages' system and content blocks (tool results
// too), Gemini's contents[].parts[].text and systemInstruction, embeddings' input, legacy prompt,
// and the same fields of the answers (output[].content[].text, candidates[].content.parts[].text).
// Only strings directly under these keys (or in an array under one) are text: image data, URLs,
// ids, roles and types are never read or changed.

const TEXT_KEYS = new Set(["content", "text", "input", "instructions", "system", "prompt", "output", "arguments", "output_text"]);

/** Bounds the walk of a hostile body (nesting depth). */
const MAX_DEPTH = 64;

type TextFn = (text: string) => string;

/** The value with every text part passed through `fn`, copied only where something changed. */
export function mapTexts(value: unknown, fn: TextFn): unknown {
  return walk(value, fn, false, 0);
}

/** Every text part, in the order mapTexts visits them. */
export function listTexts(value: unknown): string[] {
  const out: string[] = [];
  walk(
    value,
    (text) => {
      out.push(text);
      return text;
    },
    false,
    0,
  );
  return out;
}

/** The value with its text parts replaced, in visiting order, by `texts`. */
export function replaceTexts(value: unknown, texts: readonly string[]): unknown {
  let i = 0;
  return mapTexts(value, (text) => texts[i++] ?? text);
}

function walk(value: unknown, fn: TextFn, isText: boolean, depth: number): unknown {
  if (typeof value === "string") return isText ? fn(value) : value;
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | null = null;
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      const next = walk(item, fn, isText, depth + 1);
      if (next !== item) (copy ??= value.slice())[i] = next;
    }
    return copy ?? value;
  }
  let copy: Record<string, unknown> | null = null;
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const item = record[key];
    const next = walk(item, fn, TEXT_KEYS.has(key), depth + 1);
    if (next !== item) (copy ??= { ...record })[key] = next;
  }
  return copy ?? value;
}
