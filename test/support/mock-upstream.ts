// A programmable upstream on 127.0.0.1 with a random port: tests set `handler` per scenario and
// read `requests` afterwards. Canned responders speak OpenAI Chat and Anthropic Messages.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: any;
  /** The upstream key the gateway used. */
  key: string;
  /** Set when the gateway closed the connection before the response ended. */
  aborted: boolean;
}

export type MockHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface MockUpstream {
  url: string;
  host: string;
  requests: RecordedRequest[];
  handler: MockHandler;
  close(): Promise<void>;
}

export async function startMockUpstream(): Promise<MockUpstream> {
  const mock: MockUpstream = {
    url: "",
    host: "",
    requests: [],
    handler: (_req, res) => json(res, 500, { error: { message: "no handler set" } }),
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const auth = req.headers.authorization ?? "";
      const recorded: RecordedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: text ? safeJson(text) : null,
        key: auth.startsWith("Bearer ") ? auth.slice(7) : String(req.headers["x-api-key"] ?? req.headers["x-goog-api-key"] ?? ""),
        aborted: false,
      };
      mock.requests.push(recorded);
      res.on("close", () => {
        if (!res.writableFinished) recorded.aborted = true;
      });
      Promise.resolve(mock.handler(recorded, res)).catch(() => res.destroy());
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  mock.host = `127.0.0.1:${port}`;
  mock.url = `http://${mock.host}`;
  mock.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return mock;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function chatCompletion(text: string, options: { model?: string; usage?: object; toolCalls?: object[]; finish?: string; extra?: object } = {}) {
  return {
    id: "chatcmpl-mock1",
    object: "chat.completion",
    created: 1_700_000_000,
    model: options.model ?? "upstream-model",
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: options.toolCalls ? null : text, ...(options.toolCalls && { tool_calls: options.toolCalls }) },
        finish_reason: options.finish ?? (options.toolCalls ? "tool_calls" : "stop"),
        logprobs: null,
      },
    ],
    usage: options.usage ?? { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    ...options.extra,
  };
}

/** Writes an OpenAI chat stream: one chunk per piece, a finish chunk, the usage chunk if asked, [DONE]. */
export async function chatStream(
  req: RecordedRequest,
  res: ServerResponse,
  pieces: Array<string | { tool_calls: object[] } | { reasoning_content: string }>,
  options: { delayMs?: number; usage?: object; finish?: string; stopAfter?: number } = {},
): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const base = { id: "chatcmpl-mock2", object: "chat.completion.chunk", created: 1_700_000_000, model: "upstream-model" };
  const send = (obj: object) => res.write(`data: ${JSON.stringify(obj)}\n\n`);
  send({ ...base, choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] });
  let sent = 0;
  for (const piece of pieces) {
    if (options.delayMs) await sleep(options.delayMs);
    if (res.destroyed) return;
    if (options.stopAfter !== undefined && sent >= options.stopAfter) {
      res.destroy();
      return;
    }
    send({ ...base, choices: [{ index: 0, delta: typeof piece === "string" ? { content: piece } : piece, finish_reason: null }] });
    sent += 1;
  }
  send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: options.finish ?? "stop" }] });
  if (req.body?.stream_options?.include_usage) {
    send({ ...base, choices: [], usage: options.usage ?? { prompt_tokens: 10, completion_tokens: pieces.length, total_tokens: 10 + pieces.length } });
  }
  res.end("data: [DONE]\n\n");
}

export function anthropicMessage(text: string, options: { toolUse?: { id: string; name: string; input: object }; stop?: string; usage?: object } = {}) {
  const content: object[] = [];
  if (text) content.push({ type: "text", text });
  if (options.toolUse) content.push({ type: "tool_use", ...options.toolUse });
  return {
    id: "msg_mock1",
    type: "message",
    role: "assistant",
    model: "claude-upstream",
    content,
    stop_reason: options.stop ?? (options.toolUse ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: options.usage ?? { input_tokens: 12, output_tokens: 6, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  };
}

/** Writes an Anthropic Messages stream for text pieces (and an optional tool call split in fragments). */
export async function anthropicStream(
  res: ServerResponse,
  pieces: string[],
  options: { tool?: { id: string; name: string; fragments: string[] }; usage?: { input: number; output: number; cache?: Record<string, unknown> } } = {},
): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (event: string, data: object) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  const usage = options.usage ?? { input: 12, output: pieces.length };
  send("message_start", {
    message: {
      id: "msg_mock2",
      type: "message",
      role: "assistant",
      model: "claude-upstream",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.input, output_tokens: 1, ...usage.cache },
    },
  });
  let index = 0;
  if (pieces.length) {
    send("content_block_start", { index, content_block: { type: "text", text: "" } });
    send("ping", {});
    for (const piece of pieces) send("content_block_delta", { index, delta: { type: "text_delta", text: piece } });
    send("content_block_stop", { index });
    index += 1;
  }
  if (options.tool) {
    send("content_block_start", { index, content_block: { type: "tool_use", id: options.tool.id, name: options.tool.name, input: {} } });
    for (const fragment of options.tool.fragments) send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: fragment } });
    send("content_block_stop", { index });
  }
  send("message_delta", { delta: { stop_reason: options.tool ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: usage.output } });
  send("message_stop", {});
  res.end();
}
