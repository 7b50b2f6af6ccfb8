// The external moderator of a webhook guardrail (docs/configuration.md, "Guardrails"): one POST
// with the texts, answered by a verdict. Whatever goes wrong (timeout, connection, status, a body
// that is not a verdict) is a failure the guardrail's on_failure policy decides; the moderator's
// address and answer never reach the client or the logs beyond the guardrail's name.
import { z } from "zod";
import type { GuardrailSide, GuardrailWebhook } from "../../core/guardrails/guardrail.js";
import { maskLabel } from "../../core/guardrails/matcher.js";

export type Verdict = { verdict: "pass" } | { verdict: "block" } | { verdict: "mask"; texts: string[] };

const MAX_SPANS = 1_000;
/** A verdict body larger than this (beyond twice the texts sent) is a failure, not read further. */
const VERDICT_SLACK_BYTES = 64 * 1024;

const verdictSchema = z.object({
  verdict: z.enum(["pass", "block", "mask"]),
  /** mask: every text as it should be sent, in the order given. */
  texts: z.array(z.string()).optional(),
  /** mask: or spans of the texts to replace ([REDACTED:<label>], label "moderator" by default). */
  spans: z
    .array(
      z.strictObject({
        text: z.number().int().min(0),
        start: z.number().int().min(0),
        end: z.number().int().min(0),
        label: z
          .string()
          .max(40)
          .regex(/^[A-Za-z0-9_.-]+$/)
          .optional(),
      }),
    )
    .max(MAX_SPANS)
    .optional(),
});

export class ModeratorFailure extends Error {
  override name = "ModeratorFailure";
}

export async function askModerator(webhook: GuardrailWebhook, call: { guardrail: string; side: GuardrailSide; requestId: string; texts: readonly string[] }): Promise<Verdict> {
  const body = JSON.stringify({ guardrail: call.guardrail, side: call.side, request_id: call.requestId, texts: call.texts });
  let text: string;
  try {
    const response = await fetch(webhook.url, {
      method: "POST",
      headers: { ...webhook.headers, "content-type": "application/json" },
      body,
      signal: AbortSignal.timeout(webhook.timeoutMs),
      redirect: "error",
    });
    if (response.status !== 200) {
      await response.body?.cancel().catch(() => undefined);
      throw new ModeratorFailure(`the moderator answered ${response.status}`);
    }
    text = await response.text();
  } catch (error) {
    if (error instanceof ModeratorFailure) throw error;
    throw new ModeratorFailure(error instanceof Error && error.name === "TimeoutError" ? "the moderator did not answer in time" : "the moderator could not be reached");
  }
  if (text.length > 2 * body.length + VERDICT_SLACK_BYTES) throw new ModeratorFailure("the moderator's answer is too large");
  let parsed: z.infer<typeof verdictSchema>;
  try {
    parsed = verdictSchema.parse(JSON.parse(text));
  } catch {
    throw new ModeratorFailure("the moderator's answer is not a verdict");
  }
  if (parsed.verdict !== "mask") return { verdict: parsed.verdict };
  return { verdict: "mask", texts: maskedTexts(parsed, call.texts) };
}

function maskedTexts(parsed: z.infer<typeof verdictSchema>, sent: readonly string[]): string[] {
  if (parsed.texts) {
    if (parsed.texts.length !== sent.length) throw new ModeratorFailure("the moderator's texts do not match those sent");
    return parsed.texts;
  }
  if (!parsed.spans) throw new ModeratorFailure("a mask verdict needs texts or spans");
  const byText = new Map<number, Array<{ start: number; end: number; label: string }>>();
  for (const span of parsed.spans) {
    const target = sent[span.text];
    if (target === undefined || span.end <= span.start || span.end > target.length) throw new ModeratorFailure("a span is outside the texts sent");
    const list = byText.get(span.text) ?? [];
    list.push({ start: span.start, end: span.end, label: span.label ?? "moderator" });
    byText.set(span.text, list);
  }
  return sent.map((text, i) => {
    const spans = (byText.get(i) ?? []).sort((a, b) => a.start - b.start);
    let out = "";
    let at = 0;
    for (const span of spans) {
      if (span.start < at) throw new ModeratorFailure("spans overlap");
      out += text.slice(at, span.start) + maskLabel(span.label);
      at = span.end;
    }
    return out + text.slice(at);
  });
}
