// Finding a guardrail's patterns in text (decision 0041). A pattern from configuration runs on RE2's
// linear-time engine (re2js): however it is written, a scan costs time proportional to the text,
// and one RE2 cannot run so (backreferences, lookaround) does not compile: a config error. The
// built-in patterns are the gateway's own code, written without nested or ambiguous repetition
// (each has a test on hostile input), and run on V8's RegExp: 25 times faster than re2js here.
import { RE2JS } from "re2js";
import { BUILTIN_PATTERNS, PATTERN_GROUPS, type BuiltinPattern } from "./builtin-patterns.js";

export interface TextMatch {
  start: number;
  end: number;
  /** The pattern's id: what a mask writes, `[REDACTED:<label>]`. */
  label: string;
}

export interface CompiledPattern {
  label: string;
  /** The longest text a match can span (a stream's holdback window is sized from it). */
  maxLength: number;
  find(text: string): TextMatch[];
}

/** Bounds on what a config may ask for. */
export const MAX_CUSTOM_PATTERNS = 32;
export const MAX_PATTERN_LENGTH = 500;
/** A custom pattern whose longest match is not bounded is assumed to span at most this much. */
export const DEFAULT_CUSTOM_MAX_LENGTH = 256;
/** Matches kept per pattern and text: the work of masking is bounded however many there are. */
const MAX_MATCHES = 1_000;

function re2Pattern(label: string, source: string, maxLength: number, flags: number): CompiledPattern {
  const pattern = RE2JS.compile(source, flags);
  return {
    label,
    maxLength,
    find(text) {
      const out: TextMatch[] = [];
      if (text.length === 0) return out;
      const matcher = pattern.matcher(text);
      while (out.length < MAX_MATCHES && matcher.find()) {
        const start = matcher.start();
        const end = matcher.end();
        if (end > start) out.push({ start, end, label }); // an empty match masks nothing
      }
      return out;
    },
  };
}

function builtinPattern(p: BuiltinPattern): CompiledPattern {
  const regex = new RegExp(p.source, "g");
  return {
    label: p.id,
    maxLength: p.maxLength,
    find(text) {
      const out: TextMatch[] = [];
      if (text.length === 0) return out;
      regex.lastIndex = 0;
      let match: RegExpExecArray | null;
      while (out.length < MAX_MATCHES && (match = regex.exec(text)) !== null) {
        const start = match.index;
        const end = start + match[0].length;
        if (end === start) regex.lastIndex++;
        else if (!p.valid || p.valid(match[0])) out.push({ start, end, label: p.id });
      }
      return out;
    },
  };
}

const builtinById = new Map<string, BuiltinPattern>(BUILTIN_PATTERNS.map((p) => [p.id, p]));

/** The names a builtin guardrail's `patterns` list may hold: every pattern id and group. */
export const BUILTIN_NAMES: readonly string[] = [...BUILTIN_PATTERNS.map((p) => p.id), ...Object.keys(PATTERN_GROUPS)];

/** Built-in patterns by id or group name, each once; throws naming an unknown one. */
export function compileBuiltins(names: readonly string[]): CompiledPattern[] {
  const ids = new Set<string>();
  for (const name of names) {
    const group = PATTERN_GROUPS[name];
    if (group) for (const id of group) ids.add(id);
    else if (builtinById.has(name)) ids.add(name);
    else throw new Error(`unknown built-in pattern "${name}" (known: ${BUILTIN_NAMES.join(", ")})`);
  }
  // In the catalogue's order, so that of two patterns matching the same span the first names it.
  return BUILTIN_PATTERNS.filter((p) => ids.has(p.id)).map(builtinPattern);
}

export interface CustomPatternSpec {
  /** The label a mask writes. */
  name: string;
  pattern: string;
  caseInsensitive?: boolean;
  maxLength?: number;
}

/** A configured pattern; throws with RE2's reason when it cannot run in linear time or is malformed. */
export function compileCustom(spec: CustomPatternSpec): CompiledPattern {
  if (spec.pattern.length > MAX_PATTERN_LENGTH) throw new Error(`pattern is longer than ${MAX_PATTERN_LENGTH} characters`);
  try {
    return re2Pattern(spec.name, spec.pattern, spec.maxLength ?? DEFAULT_CUSTOM_MAX_LENGTH, spec.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`pattern "${spec.name}" is not one RE2 runs in linear time or is malformed (${reason})`);
  }
}

/**
 * Every match of these patterns in the text, by start; where two overlap, the one starting first
 * (then the longer, then the earlier pattern) wins, so a span is masked once.
 */
export function findMatches(patterns: readonly CompiledPattern[], text: string): TextMatch[] {
  const all: TextMatch[] = [];
  for (const pattern of patterns) for (const match of pattern.find(text)) all.push(match);
  if (all.length < 2) return all;
  all.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: TextMatch[] = [];
  for (const match of all) if (kept.length === 0 || match.start >= kept[kept.length - 1]!.end) kept.push(match);
  return kept;
}

export function maskLabel(label: string): string {
  return `[REDACTED:${label}]`;
}

/** The text with each match replaced by its mask (matches sorted and disjoint, as findMatches gives them). */
export function maskText(text: string, matches: readonly TextMatch[]): string {
  if (matches.length === 0) return text;
  let out = "";
  let at = 0;
  for (const match of matches) {
    out += text.slice(at, match.start) + maskLabel(match.label);
    at = match.end;
  }
  return out + text.slice(at);
}
