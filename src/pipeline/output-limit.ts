// The gateway's own output limit on a clamped stream (docs/billing.md, "Clamping"): an upstream that
// may not honour the limit it was sent (UpstreamCapabilities.honorsOutputLimit false) is relayed
// only until the delivered output reaches the limit the request was admitted with, estimated from
// the delivered text (estimate-tokens.ts). Then the upstream is dropped and the stream ends with the
// format's length stop (StreamTranslator.stopAtLimit) instead of its normal end.
import { TextTokenCounter } from "../billing/estimate-tokens.js";
import type { StreamTranslator } from "../upstreams/plan.js";

export interface LimitedTranslator extends StreamTranslator {
  /** The delivered output reached the limit: relay nothing more; end() writes the length stop. */
  reached(): boolean;
}

/** The translator stopping at `outputTokens`; null when its plan has no length stop of its own (its upstream honours limits). */
export function stopAtOutputLimit(translator: StreamTranslator, outputTokens: number): LimitedTranslator | null {
  const stop = translator.stopAtLimit;
  if (!stop) return null;
  const counter = new TextTokenCounter();
  let counted = 0;
  let reached = false;
  return {
    push(event) {
      if (reached) return [];
      const frames = translator.push(event);
      // deliveredText() grows by appending: only the new part is counted.
      const text = translator.deliveredText();
      counter.add(text.slice(counted));
      counted = text.length;
      if (counter.tokens() >= outputTokens) reached = true;
      return frames;
    },
    end: () => (reached ? stop() : translator.end()),
    fail: (type, message) => translator.fail(type, message),
    reportedUsage: () => translator.reportedUsage(),
    deliveredText: () => translator.deliveredText(),
    reached: () => reached,
  };
}
