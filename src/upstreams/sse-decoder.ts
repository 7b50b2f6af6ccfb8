// The stream decoder of every upstream that answers with server-sent events.
import { SseParser } from "../core/sse.js";
import type { StreamDecoder } from "./descriptor.js";

export function sseDecoder(): StreamDecoder {
  return new SseParser();
}
