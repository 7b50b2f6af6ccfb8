// Cost in-band: the charged cost of a request, as the decimal text of x-gateway-cost-usd, in the
// usage object of its answer (`usage.cost`; `response.usage.cost` in a Responses stream event).
// The cost is known only after settlement, which happens once the upstream is done. A buffered body
// is settled before it is sent, so it is stamped directly. A stream's usage frame usually arrives
// from the upstream while streaming: CostInBandStream holds that frame (and the closing frames after
// it) back and releases it, stamped, with the closing frames. Every other frame passes at once.
import type { SseEvent } from "../core/sse.js";
import type { ClientFrame, StreamTranslator, UsagePlace } from "../upstreams/plan.js";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The value with `cost` added to its usage object at `place` (a copy; the input is not changed); the
 * value as it is when it has no usage object there (a Responses event whose usage is null).
 */
export function withCost(data: unknown, place: UsagePlace, cost: string): unknown {
  if (!isObject(data)) return data;
  if (place === "usage") return isObject(data.usage) ? { ...data, usage: { ...data.usage, cost } } : data;
  const response = data.response;
  if (!isObject(response) || !isObject(response.usage)) return data;
  return { ...data, response: { ...response, usage: { ...response.usage, cost } } };
}

/** The frame with its usage stamped with the cost (usage frames are parsed values, never raw text). */
function stampFrame(frame: ClientFrame, place: UsagePlace, cost: string): ClientFrame {
  if (frame.raw || frame.jsonText) return frame;
  return { ...(frame.event !== undefined && { event: frame.event }), data: withCost(frame.data, place, cost) };
}

/**
 * Wraps a stream translator so that its usage frame carries the charged cost. The last frame marked
 * `usageAt` is held with the frames that follow it (the format's closing events: message_stop, the
 * end of a Responses stream); a later usage frame releases the held ones unstamped, so that an
 * upstream reporting usage on more than one chunk delays at most the frames after its latest
 * report. Call setCost() after settlement, then end() or fail().
 */
export class CostInBandStream implements StreamTranslator {
  #held: ClientFrame[] | null = null;
  #cost: string | null = null;

  constructor(private readonly inner: StreamTranslator) {}

  push(event: SseEvent): ClientFrame[] {
    return this.#hold(this.inner.push(event));
  }

  /** The charged cost as formatUsd text; null when settlement failed (the frame goes out without it). */
  setCost(cost: string | null): void {
    this.#cost = cost;
  }

  end(): ClientFrame[] {
    return this.#release(this.inner.end());
  }

  fail(type: string, message: string): ClientFrame[] {
    return this.#release(this.inner.fail(type, message));
  }

  reportedUsage() {
    return this.inner.reportedUsage();
  }

  deliveredText(): string {
    return this.inner.deliveredText();
  }

  #hold(frames: ClientFrame[]): ClientFrame[] {
    let usageIndex = -1;
    for (let i = frames.length - 1; i >= 0; i--) {
      if (frames[i]!.usageAt !== undefined) {
        usageIndex = i;
        break;
      }
    }
    if (usageIndex < 0) {
      if (this.#held === null) return frames; // the common case: nothing held, nothing to hold
      this.#held.push(...frames);
      return [];
    }
    const released = this.#held === null ? frames.slice(0, usageIndex) : [...this.#held, ...frames.slice(0, usageIndex)];
    this.#held = frames.slice(usageIndex);
    return released;
  }

  #release(closing: ClientFrame[]): ClientFrame[] {
    const frames = this.#held === null ? closing : [...this.#held, ...closing];
    this.#held = null;
    const cost = this.#cost;
    if (cost === null) return frames;
    for (let i = frames.length - 1; i >= 0; i--) {
      const place = frames[i]!.usageAt;
      if (place !== undefined) {
        frames[i] = stampFrame(frames[i]!, place, cost);
        break;
      }
    }
    return frames;
  }
}
