// Reading a Chat request's common fields for a translation to another upstream API (Anthropic
// Messages, Bedrock Converse, Gemini): the same rules everywhere, and one warning for each field the
// translation drops.
import { invalidRequest } from "../../errors/catalogue.js";
import { isNumber, isString, type JsonObject, type WarningList } from "./narrow.js";

/**
 * Fields every such translation reads, or knows to be meaningless upstream (stream_options: these
 * upstreams always report usage).
 */
const TRANSLATED_FIELDS = [
  "model",
  "messages",
  "max_tokens",
  "max_completion_tokens",
  "n",
  "stop",
  "temperature",
  "top_p",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "stream",
  "stream_options",
  "reasoning_effort",
];

/** The fields a translation handles: the common ones and its own. */
export function handledFields(own: readonly string[]): ReadonlySet<string> {
  return new Set([...TRANSLATED_FIELDS, ...own]);
}

/** Warns of each field set (not null) that the translation does not handle: it is not sent. */
export function warnDroppedFields(body: JsonObject, handled: ReadonlySet<string>, target: string, warnings: WarningList): void {
  for (const key of Object.keys(body)) {
    if (!handled.has(key) && body[key] !== null) warnings.add(`${key}: dropped (no ${target} equivalent)`);
  }
}

/** The client's output limit, if it set one (max_completion_tokens first). */
export function readOutputLimit(body: JsonObject): number | undefined {
  for (const key of ["max_completion_tokens", "max_tokens"] as const) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (!isNumber(value) || value < 1) throw invalidRequest(key, `${key} must be a positive integer.`);
    return value;
  }
  return undefined;
}

/** `stop` as a list of sequences; undefined when absent or empty. */
export function readStopSequences(stop: unknown): string[] | undefined {
  const sequences = isString(stop) ? [stop] : stop;
  if (!Array.isArray(sequences) || sequences.length === 0) return undefined;
  if (!sequences.every(isString)) throw invalidRequest("stop", "stop must be a string or an array of strings.");
  return sequences;
}

/** `temperature` for an upstream that takes 0 to 1 (OpenAI allows up to 2): a higher one is clamped, with a warning. */
export function readUnitTemperature(temperature: unknown, target: string, warnings: WarningList): number | undefined {
  if (!isNumber(temperature)) return undefined;
  if (temperature > 1) warnings.add(`temperature: clamped to 1 (${target} maximum)`);
  return Math.min(temperature, 1);
}
