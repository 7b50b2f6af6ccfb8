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

/** Longest a stream's text is held back for pattern guardrails: the delay they add is bounded by it. */
export const MAX_HOLDBACK_CHARS = 256;

/** The holdback window for these guardrails' answer side: the longest match, capped. */
export function holdbackChars(guardrails: readonly Guardrail[]): number {
  let longest = 0;
  for (const guardrail of guardrails) for (const pattern of guardrail.patterns) longest = Math.max(longest, pattern.maxLength);
  return Math.min(longest, MAX_HOLDBACK_CHARS);
}
