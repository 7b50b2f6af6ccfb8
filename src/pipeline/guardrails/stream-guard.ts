// Pattern guardrails on a streamed answer (docs/configuration.md, "Guardrails"): the text deltas of
// the client's format (Chat's choices[0].delta.content, Messages' text_delta, Responses'
// output_text.delta, Gemini's parts[].text) are held back until `window` characters follow them,
// so a match split across events (`sk-ant-` in one, the rest in the next) is seen whole before any
// of it leaves. The added delay is bounded: the time the upstream takes to write `window` more
// characters (at most 256), and nothing at the end. Other frames wait in order behind held text;
// the text they carry whole (Responses' output_text.done, response.completed) is checked as it is.
import type { Guardrail } from "../../core/guardrails/guardrail.js";
import { findMatches, maskLabel } from "../../core/guardrails/matcher.js";
import type { SseEvent } from "../../core/sse.js";
import type { ClientFrame, StreamTranslator } from "../../upstreams/plan.js";
import { patternAction, type GuardrailBlock, type GuardrailDecision } from "./check-texts.js";
import { mapTexts } from "./text-parts.js";

interface DeltaSlot {
  text: string;
  write(text: string): void;
}

interface Held {
  frame: ClientFrame;
  slot: DeltaSlot | null;
}

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value);

/** The one incremental text of a frame in any client format, or null. */
function deltaSlot(data: unknown): DeltaSlot | null {
  if (!isRecord(data)) return null;
  const slotAt = (owner: Json, key: string): DeltaSlot | null => (typeof owner[key] === "string" ? { text: owner[key], write: (text) => void (owner[key] = text) } : null);
  if (data.type === "response.output_text.delta") return slotAt(data, "delta");
  if (data.type === "content_block_delta") return isRecord(data.delta) && data.delta.type === "text_delta" ? slotAt(data.delta, "text") : null;
  const choice: unknown = Array.isArray(data.choices) ? data.choices[0] : undefined;
  if (isRecord(choice) && isRecord(choice.delta)) return slotAt(choice.delta, "content");
  const candidate: unknown = Array.isArray(data.candidates) ? data.candidates[0] : undefined;
  if (isRecord(candidate) && isRecord(candidate.content) && Array.isArray(candidate.content.parts)) {
    const part: unknown = candidate.content.parts.find((p: unknown) => isRecord(p) && typeof p.text === "string" && p.thought !== true);
    if (isRecord(part)) return slotAt(part, "text");
  }
  return null;
}

export class GuardedStream implements StreamTranslator {
  readonly #held: Held[] = [];
  #blocked: GuardrailBlock | null = null;
  readonly stopAtLimit?: () => ClientFrame[];

  constructor(
    private readonly inner: StreamTranslator,
    private readonly guardrails: readonly Guardrail[],
    private readonly window: number,
    private readonly decide: (decision: GuardrailDecision) => void,
  ) {
    const stop = inner.stopAtLimit;
    if (stop) this.stopAtLimit = () => this.#flush(stop());
  }

  /** The guardrail that cut the stream, once one has. */
  blocked(): GuardrailBlock | null {
    return this.#blocked;
  }

  /**
   * The upstream finished: every held text is checked now, before settlement, so a block found in
   * the last characters is known before the charge is decided. What end() adds is checked again.
   */
  checkHeld(): void {
    if (!this.#blocked && this.#held.length > 0) this.#scan(this.#held.length);
  }

  push(event: SseEvent): ClientFrame[] {
    if (this.#blocked) return [];
    this.#accept(this.inner.push(event));
    return this.#release(false);
  }

  end(): ClientFrame[] {
    return this.#flush(this.inner.end());
  }

  fail(type: string, message: string): ClientFrame[] {
    if (this.#blocked) return [];
    const held = this.#release(true);
    return this.#blocked ? [] : [...held, ...this.inner.fail(type, message)];
  }

  reportedUsage() {
    return this.inner.reportedUsage();
  }

  deliveredText(): string {
    return this.inner.deliveredText();
  }

  #flush(frames: ClientFrame[]): ClientFrame[] {
    if (this.#blocked) return [];
    this.#accept(frames);
    return this.#release(true);
  }

  #accept(frames: ClientFrame[]): void {
    for (const original of frames) {
      let frame = original;
      if (frame.jsonText && !frame.raw) {
        try {
          frame = { ...frame, data: JSON.parse(String(frame.data)) as unknown, jsonText: false };
        } catch {
          // Not JSON: the encoder reports it as the upstream's protocol error.
        }
      }
      const slot = frame.raw ? null : deltaSlot(frame.data);
      if (slot === null && !frame.raw) frame = this.#checkWhole(frame);
      this.#held.push({ frame, slot });
    }
  }

  /** A frame that is no delta: its text, checked and masked as it stands. */
  #checkWhole(frame: ClientFrame): ClientFrame {
    let data = frame.data;
    for (const guardrail of this.guardrails) {
      let action: GuardrailDecision["action"] = "pass";
      data = mapTexts(data, (text) => {
        const result = patternAction(guardrail, [text]);
        if (result.action !== "pass") action = result.action;
        return result.texts[0]!;
      });
      if (action === "pass") continue;
      this.decide({ guardrail: guardrail.name, side: "response", action });
      if (action === "block") {
        this.#blocked ??= { guardrail: guardrail.name, unavailable: false };
        break;
      }
    }
    return data === frame.data ? frame : { ...frame, data };
  }

  /** The frames whose text has `window` characters after it (all of them when `all`), checked. */
  #release(all: boolean): ClientFrame[] {
    if (this.#blocked) return [];
    const held = this.#held;
    let count = held.length;
    if (!all) {
      let after = 0;
      count = 0;
      for (let i = held.length - 1; i >= 0; i--) {
        if (after >= this.window) {
          count = i + 1;
          break;
        }
        after += held[i]!.slot?.text.length ?? 0;
      }
    }
    if (count === 0) return [];
    this.#scan(count);
    if (this.#blocked) return [];
    return held.splice(0, count).map((h) => h.frame);
  }

  /** Every match starting in the first `count` held frames' text: blocked, masked or logged. */
  #scan(count: number): void {
    const held = this.#held;
    for (const guardrail of this.guardrails) {
      const offsets: number[] = [];
      let text = "";
      for (const h of held) {
        offsets.push(text.length);
        text += h.slot?.text ?? "";
      }
      const boundary = count < held.length ? offsets[count]! : text.length;
      const matches = findMatches(guardrail.patterns, text).filter((m) => m.start < boundary);
      if (matches.length === 0) continue;
      this.decide({ guardrail: guardrail.name, side: "response", action: guardrail.mode });
      if (guardrail.mode === "block") {
        this.#blocked = { guardrail: guardrail.name, unavailable: false };
        return;
      }
      if (guardrail.mode !== "mask") continue;
      // Last match first: each edit changes only text after its own start.
      for (let m = matches.length - 1; m >= 0; m--) {
        const { start, end, label } = matches[m]!;
        let i = 0;
        while (!(offsets[i]! <= start && start < offsets[i]! + (held[i]!.slot?.text.length ?? 0))) i++;
        const first = held[i]!.slot!;
        const local = start - offsets[i]!;
        const masked = first.text.slice(0, local) + maskLabel(label) + first.text.slice(Math.min(end - offsets[i]!, first.text.length));
        first.write(masked);
        first.text = masked;
        // The rest of a match split across frames is removed from the frames after.
        for (let j = i + 1; j < held.length && offsets[j]! < end; j++) {
          const slot = held[j]!.slot;
          if (slot === null) continue;
          const rest = slot.text.slice(Math.min(end - offsets[j]!, slot.text.length));
          slot.write(rest);
          slot.text = rest;
        }
      }
    }
  }
}
