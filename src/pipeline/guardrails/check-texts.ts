// Runs guardrails over a list of texts (a request's text parts, or an answer's): each guardrail in
// the configured order sees the texts the ones before it left. A block stops at once.
import type { Guardrail, GuardrailAction, GuardrailSide } from "../../core/guardrails/guardrail.js";
import { findMatches, maskText } from "../../core/guardrails/matcher.js";
import { askModerator, ModeratorFailure } from "./webhook.js";

export interface GuardrailDecision {
  guardrail: string;
  side: GuardrailSide;
  action: GuardrailAction;
}

export interface GuardrailBlock {
  guardrail: string;
  /** The moderator failed and the guardrail fails closed (not a verdict on the text). */
  unavailable: boolean;
}

export interface CheckedTexts {
  texts: string[];
  decisions: GuardrailDecision[];
  blocked: GuardrailBlock | null;
}

/** The guardrails that apply to this side. */
export function guardrailsFor(list: readonly Guardrail[], side: GuardrailSide): Guardrail[] {
  return list.filter((g) => (side === "request" ? g.request : g.response));
}

/** Pattern guardrails only, synchronously (the answer side of a stream, where no moderator is asked). */
export function patternAction(guardrail: Guardrail, texts: string[]): { action: GuardrailAction; texts: string[] } {
  let found = false;
  const out = texts.map((text) => {
    const matches = findMatches(guardrail.patterns, text);
    if (matches.length === 0) return text;
    found = true;
    return guardrail.mode === "mask" ? maskText(text, matches) : text;
  });
  return { action: found ? guardrail.mode : "pass", texts: out };
}

export async function checkTexts(guardrails: readonly Guardrail[], side: GuardrailSide, input: readonly string[], requestId: string): Promise<CheckedTexts> {
  let texts = [...input];
  const decisions: GuardrailDecision[] = [];
  for (const guardrail of guardrails) {
    let action: GuardrailAction;
    let unavailable = false;
    if (guardrail.webhook === null) {
      const result = patternAction(guardrail, texts);
      action = result.action;
      texts = result.texts;
    } else {
      try {
        const verdict = await askModerator(guardrail.webhook, { guardrail: guardrail.name, side, requestId, texts });
        action = verdict.verdict === "pass" ? "pass" : guardrail.mode === "log" ? "log" : verdict.verdict;
        if (verdict.verdict === "mask" && action === "mask") texts = verdict.texts;
      } catch (error) {
        if (!(error instanceof ModeratorFailure)) throw error;
        action = "error";
        unavailable = guardrail.onFailure === "closed";
      }
    }
    decisions.push({ guardrail: guardrail.name, side, action });
    if (action === "block" || unavailable) return { texts, decisions, blocked: { guardrail: guardrail.name, unavailable } };
  }
  return { texts, decisions, blocked: null };
}
