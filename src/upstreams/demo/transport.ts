// The demo upstream's transport: an OpenAI Chat Completions server as a function call inside the
// gateway process. It answers the request the Chat plan built exactly as the HTTP client would
// (status, headers, a readable body), so forward, the stream relay, the bridges and billing run on
// it unchanged; nothing leaves the process. Only POST {base}/chat/completions exists.
import { Readable } from "node:stream";
import type { ProviderConfig } from "../../core/catalog.js";
import type { Cancellation } from "../../core/cancellation.js";
import { ClientAbortedError, type UpstreamHttpResponse, type UpstreamRequest } from "../upstream-client.js";
import { demoAnswer, type DemoAnswer } from "./answer.js";

/** Between two streamed chunks, so that streaming shows; the upstream model `demo-fast` does not wait. */
const PACE_MS = 20;
const WORDS_PER_CHUNK = 2;

/** A body as undici gives it: a byte stream with text() and dump(). */
class DemoBody extends Readable {
  #parts: string[];
  #paceMs: number;
  #timer: NodeJS.Timeout | null = null;

  constructor(parts: string[], paceMs: number) {
    super();
    this.#parts = parts;
    this.#paceMs = paceMs;
  }

  override _read(): void {
    if (this.#timer !== null) return;
    const next = this.#parts.shift();
    if (next === undefined) {
      this.push(null);
      return;
    }
    if (this.#paceMs === 0) {
      this.push(Buffer.from(next));
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.push(Buffer.from(next));
    }, this.#paceMs);
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    callback(error);
  }

  async text(): Promise<string> {
    let out = "";
    for await (const chunk of this) out += (chunk as Buffer).toString("utf8");
    return out;
  }

  dump(): Promise<void> {
    this.destroy();
    return Promise.resolve();
  }
}

function jsonResponse(status: number, value: unknown): UpstreamHttpResponse {
  return { status, headers: { "content-type": "application/json" }, body: new DemoBody([JSON.stringify(value)], 0) };
}

function errorResponse(status: number, type: string, message: string): UpstreamHttpResponse {
  return jsonResponse(status, { error: { type, message } });
}

function completion(answer: DemoAnswer, id: string, model: string, created: number) {
  const message =
    answer.kind === "text"
      ? { role: "assistant", content: answer.text }
      : { role: "assistant", content: null, tool_calls: [{ id: answer.id, type: "function", function: { name: answer.name, arguments: answer.arguments } }] };
  const finish = answer.kind === "text" ? answer.finishReason : "tool_calls";
  return { id, object: "chat.completion", created, model, choices: [{ index: 0, message, finish_reason: finish }], usage: answer.usage };
}

/** The answer as Chat Completions chunks, each one SSE event, ending with the usage chunk and [DONE]. */
function streamEvents(answer: DemoAnswer, id: string, model: string, created: number, withUsage: boolean): string[] {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const chunks: unknown[] = [chunk({ role: "assistant", content: "" })];
  if (answer.kind === "text") {
    const words = answer.text.split(/(?<= )/);
    for (let i = 0; i < words.length; i += WORDS_PER_CHUNK) chunks.push(chunk({ content: words.slice(i, i + WORDS_PER_CHUNK).join("") }));
    chunks.push(chunk({}, answer.finishReason));
  } else {
    const half = Math.ceil(answer.arguments.length / 2);
    chunks.push(chunk({ tool_calls: [{ index: 0, id: answer.id, type: "function", function: { name: answer.name, arguments: "" } }] }));
    chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: answer.arguments.slice(0, half) } }] }));
    chunks.push(chunk({ tool_calls: [{ index: 0, function: { arguments: answer.arguments.slice(half) } }] }));
    chunks.push(chunk({}, "tool_calls"));
  }
  if (withUsage) chunks.push({ id, object: "chat.completion.chunk", created, model, choices: [], usage: answer.usage });
  return [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), "data: [DONE]\n\n"];
}

/** Destroys the body when the request is cancelled; returns the function that stops listening. */
function onAbort(signal: AbortSignal | Cancellation, abort: () => void): () => void {
  if (signal instanceof AbortSignal) {
    signal.addEventListener("abort", abort, { once: true });
    return () => signal.removeEventListener("abort", abort);
  }
  signal.once("abort", abort);
  return () => signal.off("abort", abort);
}

export function demoTransport(provider: ProviderConfig, request: UpstreamRequest, signal: AbortSignal | Cancellation): Promise<UpstreamHttpResponse> {
  if (signal.aborted) return Promise.reject(new ClientAbortedError("the client went away"));
  const path = request.url.startsWith(provider.baseUrl) ? request.url.slice(provider.baseUrl.length) : request.url;
  if (request.method !== "POST" || path !== "/chat/completions") return Promise.resolve(errorResponse(404, "not_found", "The demo upstream serves POST /chat/completions only."));
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(request.body === undefined ? "" : request.body.toString());
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    body = parsed as Record<string, unknown>;
  } catch {
    return Promise.resolve(errorResponse(400, "invalid_request_error", "The request body is not a JSON object."));
  }
  const model = typeof body.model === "string" ? body.model : "demo";
  const answer = demoAnswer(body);
  const id = `chatcmpl-demo-${answer.usage.prompt_tokens}-${answer.usage.completion_tokens}`;
  const created = Math.floor(Date.now() / 1000);
  if (body.stream !== true) return Promise.resolve(jsonResponse(200, completion(answer, id, model, created)));
  const streamOptions = body.stream_options as { include_usage?: unknown } | undefined;
  const events = streamEvents(answer, id, model, created, streamOptions?.include_usage === true);
  const stream = new DemoBody(events, model === "demo-fast" ? 0 : PACE_MS);
  const stopListening = onAbort(signal, () => stream.destroy());
  stream.once("close", stopListening);
  return Promise.resolve({ status: 200, headers: { "content-type": "text/event-stream" }, body: stream });
}
