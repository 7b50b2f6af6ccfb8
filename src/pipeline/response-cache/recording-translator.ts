// A stream translator that keeps a copy of every client frame its inner translator makes, so that a
// response-cache miss can store the stream as the client got it (before the cost is stamped in).
import type { SseEvent } from "../../core/sse.js";
import type { ClientFrame, StreamTranslator } from "../../upstreams/plan.js";

export class RecordingTranslator implements StreamTranslator {
  readonly frames: ClientFrame[] = [];

  constructor(private readonly inner: StreamTranslator) {}

  push(event: SseEvent): ClientFrame[] {
    return this.#keep(this.inner.push(event));
  }

  end(): ClientFrame[] {
    return this.#keep(this.inner.end());
  }

  fail(type: string, message: string): ClientFrame[] {
    return this.inner.fail(type, message);
  }

  reportedUsage() {
    return this.inner.reportedUsage();
  }

  deliveredText(): string {
    return this.inner.deliveredText();
  }

  #keep(frames: ClientFrame[]): ClientFrame[] {
    this.frames.push(...frames);
    return frames;
  }
}
