// A guardrail as the request path runs it (docs/configuration.md, "Guardrails"): built from the
// config file's `guardrails` list by src/config/guardrail-settings.ts, its patterns compiled once.
import type { CompiledPattern } from "./matcher.js";

export type GuardrailMode = "block" | "mask" | "log";
export type GuardrailSide = "request" | "response";
/** What a guardrail did to one request or answer: what metrics and the request log count. */
export type GuardrailAction = "block" | "mask" | "log" | "pass" | "error";

export interface GuardrailWebhook {
  url: string;
  timeoutMs: number;
  /** Sent with every call (e.g. the moderator's own secret); never logged. */
  headers: Readonly<Record<string, string>>;
}

export interface Guardrail {
  name: string;
  kind: "builtin" | "regex" | "webhook";
  request: boolean;
  response: boolean;
  mode: GuardrailMode;
  /** all: every request; selected: a request whose key or workspace lists this guardrail by name. */
  applies: "all" | "selected";
  description: string;
  /** closed: a moderator that fails or times out blocks; open: the text passes (and is logged). */
  onFailure: "closed" | "open";
  /** builtin and regex; empty for a webhook. */
  patterns: readonly CompiledPattern[];
  webhook: GuardrailWebhook | null;
}

export interface GuardrailSettings {
  /** Every guardrail, in the file's order: each runs on the text the one before it left. */
  list: readonly Guardrail[];
  /**
   * An answer a response-side guardrail blocked was paid to the provider: charged what the upstream
   * reported (true, the default) or not charged at all (false). guardrails_charge_blocked_answers.
   */
  chargeBlockedAnswers: boolean;
}

export const NO_GUARDRAILS: GuardrailSettings = { list: [], chargeBlockedAnswers: true };

/** The most guardrail names one key or workspace may list. */
export const MAX_SELECTED_GUARDRAILS = 32;

const selections = new WeakMap<readonly Guardrail[], Map<string, readonly Guardrail[]>>();

/**
 * The guardrails a request meets, in the file's order: every `all` one and each `selected` one that
 * `switchedOn` (its key's and its workspace's lists) names. A listed name the file no longer has is
 * skipped (the caller warns). Memoised per list and selection: the request path reuses it.
 */
export function selectGuardrails(list: readonly Guardrail[], switchedOn: readonly string[]): readonly Guardrail[] {
  if (switchedOn.length === 0 && list.every((g) => g.applies === "all")) return list;
  let bySelection = selections.get(list);
  if (bySelection === undefined) selections.set(list, (bySelection = new Map<string, readonly Guardrail[]>()));
  const key = [...new Set(switchedOn)].sort().join("\n");
  let selected = bySelection.get(key);
  if (selected === undefined) {
    const names = new Set(switchedOn);
    selected = list.filter((g) => g.applies === "all" || names.has(g.name));
    if (bySelection.size < 10_000) bySelection.set(key, selected);
  }
  return selected;
}

/** The names in `switchedOn` that no guardrail of `list` has (removed from the file since they were set). */
export function unknownGuardrails(list: readonly Guardrail[], switchedOn: readonly string[]): string[] {
  return switchedOn.filter((name) => !list.some((g) => g.name === name));
}

/** Longest a stream's text is held back for pattern guardrails: the delay they add is bounded by it. */
export const MAX_HOLDBACK_CHARS = 256;

/** The holdback window for these guardrails' answer side: the longest match, capped. */
export function holdbackChars(guardrails: readonly Guardrail[]): number {
  let longest = 0;
  for (const guardrail of guardrails) for (const pattern of guardrail.patterns) longest = Math.max(longest, pattern.maxLength);
  return Math.min(longest, MAX_HOLDBACK_CHARS);
}
