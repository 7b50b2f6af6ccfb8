// The compatibility matrix's upstreams: one mock per upstream type of the registry, each answering
// a format-neutral Reply in its own wire format (buffered or streamed, as the gateway asked), and
// recording a format-neutral view of every request. Requests are told apart by the upstream model
// each matrix cell has for itself, so cells sharing one mock and one gateway can run in parallel.
import type { ServerResponse } from "node:http";
import { startMockUpstream } from "../../support/mock-upstream.js";
import { startMockAzure } from "../../support/mock-azure.js";
import { eventMessage, startMockBedrock } from "../../support/mock-bedrock.js";
import { startGeminiMock } from "../../support/gemini-upstream.js";

/** What a cell's upstream answers; every field is encoded in the upstream's own format. */
export interface Reply {
  text: string[];
  reasoning?: string;
  toolCall?: { id: string; name: string; args: object };
  /** Input tokens the upstream reports as read from its prompt cache (of 1,200 input tokens). */
  cachedTokens?: number;
  /** Streams one piece every 250 ms for half a minute: the abort cells cut it. */
  slow?: boolean;
}

/** A request as the upstream saw it, reduced to what the matrix checks. */
export interface SeenUpstream {
  model: string;
  path: string;
  stream: boolean;
  /** Each tool result the request carried back, as JSON. */
  toolResults: string[];
  images: number;
  /** Set when the gateway closed the connection before the answer ended. */
  aborted: boolean;
  body: unknown;
}

export type Script = (request: SeenUpstream) => Reply;

export interface MatrixUpstream {
  type: string;
  /** Providers and models of the gateway config (one model per cell id). */
  config(cellModels: string[]): string;
  /** The script and the request log of each cell, by its model. */
  scripts: Map<string, Script>;
  seen: Map<string, SeenUpstream[]>;
  close(): Promise<void>;
}

export const INPUT_TOKENS = 1200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Walks a request body for tool results and images in every format the gateway sends upstream. */
function inspect(body: unknown): { toolResults: string[]; images: number } {
  const toolResults: string[] = [];
  let images = 0;
  const walk = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== "object") return;
    const o = node as Record<string, unknown>;
    if (o.type === "tool_result" || o.role === "tool" || o.type === "function_call_output" || "functionResponse" in o || "toolResult" in o) toolResults.push(JSON.stringify(o));
    if (
      o.type === "image_url" ||
      o.type === "input_image" ||
      (o.type === "image" && o.source) ||
      "inlineData" in o ||
      (o.image && typeof o.image === "object" && "source" in o.image)
    )
      images += 1;
    for (const value of Object.values(o)) walk(value);
  };
  walk(body);
  return { toolResults, images };
}

function record(upstream: MatrixUpstream, model: string, path: string, stream: boolean, body: unknown, res: ServerResponse): { seen: SeenUpstream; reply: Reply } | null {
  const script = upstream.scripts.get(model);
  if (!script) return null;
  const seen: SeenUpstream = { model, path, stream, ...inspect(body), aborted: false, body };
  res.on("close", () => {
    if (!res.writableFinished) seen.aborted = true;
  });
  const list = upstream.seen.get(model) ?? [];
  list.push(seen);
  upstream.seen.set(model, list);
  return { seen, reply: script(seen) };
}

function pieces(reply: Reply): string[] {
  if (!reply.slow) return reply.text;
  return Array.from({ length: 120 }, (_, i) => `tick ${i} `);
}

const usageOf = (reply: Reply) => ({ input: INPUT_TOKENS, cached: reply.cachedTokens ?? 0, output: 7 });

// ---------------------------------------------------------------- OpenAI Chat (openai, azure-openai)

async function writeChat(res: ServerResponse, reply: Reply, stream: boolean, model: string): Promise<void> {
  const u = usageOf(reply);
  const usage = { prompt_tokens: u.input, completion_tokens: u.output, total_tokens: u.input + u.output, prompt_tokens_details: { cached_tokens: u.cached } };
  const call = reply.toolCall && { id: reply.toolCall.id, type: "function", function: { name: reply.toolCall.name, arguments: JSON.stringify(reply.toolCall.args) } };
  const finish = call ? "tool_calls" : "stop";
  if (!stream) {
    if (reply.slow) await sleep(30_000);
    const message = {
      role: "assistant",
      content: call ? null : reply.text.join(""),
      ...(reply.reasoning && { reasoning_content: reply.reasoning }),
      ...(call && { tool_calls: [call] }),
    };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "chatcmpl-matrix", object: "chat.completion", created: 1_700_000_000, model, choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const base = { id: "chatcmpl-matrix", object: "chat.completion.chunk", created: 1_700_000_000, model };
  const send = (delta: object, finishReason: string | null = null) =>
    res.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`);
  send({ role: "assistant", content: "" });
  if (reply.reasoning) for (const part of split(reply.reasoning)) send({ reasoning_content: part });
  for (const piece of pieces(reply)) {
    if (reply.slow) await sleep(250);
    if (res.destroyed) return;
    send({ content: piece });
  }
  if (call) {
    const args = call.function.arguments;
    send({ tool_calls: [{ index: 0, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] });
    for (const part of split(args)) send({ tool_calls: [{ index: 0, function: { arguments: part } }] });
  }
  send({}, finish);
  res.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
  res.end("data: [DONE]\n\n");
}

/** Cuts a string in three, so every field arrives in more than one delta. */
function split(text: string): string[] {
  const a = Math.floor(text.length / 3);
  const b = Math.floor((2 * text.length) / 3);
  return [text.slice(0, a), text.slice(a, b), text.slice(b)].filter(Boolean);
}

// ---------------------------------------------------------------- OpenAI Responses

async function writeResponses(res: ServerResponse, reply: Reply, stream: boolean, model: string): Promise<void> {
  const u = usageOf(reply);
  const usage = {
    input_tokens: u.input,
    input_tokens_details: { cached_tokens: u.cached },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: reply.reasoning ? 3 : 0 },
    total_tokens: u.input + u.output,
  };
  const output: Array<Record<string, unknown>> = [];
  if (reply.reasoning) output.push({ type: "reasoning", id: "rs_matrix", summary: [{ type: "summary_text", text: reply.reasoning }] });
  const text = pieces(reply);
  if (!reply.toolCall || reply.text.length) {
    output.push({ type: "message", id: "msg_matrix", role: "assistant", status: "completed", content: [{ type: "output_text", text: text.join(""), annotations: [] }] });
  }
  if (reply.toolCall) {
    output.push({
      type: "function_call",
      id: "fc_matrix",
      call_id: reply.toolCall.id,
      name: reply.toolCall.name,
      arguments: JSON.stringify(reply.toolCall.args),
      status: "completed",
    });
  }
  const response = (status: string, out: unknown[], withUsage: boolean) => ({
    id: "resp_matrix",
    object: "response",
    created_at: 1_700_000_000,
    status,
    model,
    output: out,
    ...(withUsage && { usage }),
  });
  if (!stream) {
    if (reply.slow) await sleep(30_000);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(response("completed", output, true)));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  let sequence = 0;
  const send = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  send("response.created", { response: response("in_progress", [], false) });
  for (const [index, item] of output.entries()) {
    if (item.type === "reasoning") {
      send("response.output_item.added", { output_index: index, item: { ...item, summary: [] } });
      send("response.reasoning_summary_part.added", { item_id: item.id, output_index: index, summary_index: 0, part: { type: "summary_text", text: "" } });
      for (const delta of split(reply.reasoning!)) send("response.reasoning_summary_text.delta", { item_id: item.id, output_index: index, summary_index: 0, delta });
      send("response.reasoning_summary_text.done", { item_id: item.id, output_index: index, summary_index: 0, text: reply.reasoning });
      send("response.reasoning_summary_part.done", { item_id: item.id, output_index: index, summary_index: 0, part: { type: "summary_text", text: reply.reasoning } });
    } else if (item.type === "message") {
      send("response.output_item.added", { output_index: index, item: { ...item, status: "in_progress", content: [] } });
      send("response.content_part.added", { item_id: item.id, output_index: index, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
      for (const delta of text) {
        if (reply.slow) await sleep(250);
        if (res.destroyed) return;
        send("response.output_text.delta", { item_id: item.id, output_index: index, content_index: 0, delta });
      }
      send("response.output_text.done", { item_id: item.id, output_index: index, content_index: 0, text: text.join("") });
      send("response.content_part.done", { item_id: item.id, output_index: index, content_index: 0, part: { type: "output_text", text: text.join(""), annotations: [] } });
    } else {
      send("response.output_item.added", { output_index: index, item: { ...item, arguments: "", status: "in_progress" } });
      for (const delta of split(String(item.arguments))) send("response.function_call_arguments.delta", { item_id: item.id, output_index: index, delta });
      send("response.function_call_arguments.done", { item_id: item.id, output_index: index, arguments: item.arguments });
    }
    send("response.output_item.done", { output_index: index, item });
  }
  send("response.completed", { response: response("completed", output, true) });
  res.end();
}

// ---------------------------------------------------------------- Anthropic Messages

async function writeAnthropic(res: ServerResponse, reply: Reply, stream: boolean, model: string): Promise<void> {
  const u = usageOf(reply);
  const usage = { input_tokens: u.input - u.cached, output_tokens: u.output, cache_read_input_tokens: u.cached, cache_creation_input_tokens: 0 };
  const content: Array<Record<string, unknown>> = [];
  if (reply.reasoning) content.push({ type: "thinking", thinking: reply.reasoning, signature: "sig-matrix" });
  const text = pieces(reply);
  if (text.length) content.push({ type: "text", text: text.join("") });
  if (reply.toolCall) content.push({ type: "tool_use", id: reply.toolCall.id, name: reply.toolCall.name, input: reply.toolCall.args });
  const stop = reply.toolCall ? "tool_use" : "end_turn";
  if (!stream) {
    if (reply.slow) await sleep(30_000);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "msg_matrix", type: "message", role: "assistant", model, content, stop_reason: stop, stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (event: string, data: object) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  send("message_start", {
    message: { id: "msg_matrix", type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } },
  });
  for (const [index, block] of content.entries()) {
    if (block.type === "thinking") {
      send("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
      for (const thinking of split(reply.reasoning!)) send("content_block_delta", { index, delta: { type: "thinking_delta", thinking } });
      send("content_block_delta", { index, delta: { type: "signature_delta", signature: "sig-matrix" } });
    } else if (block.type === "text") {
      send("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const piece of text) {
        if (reply.slow) await sleep(250);
        if (res.destroyed) return;
        send("content_block_delta", { index, delta: { type: "text_delta", text: piece } });
      }
    } else {
      send("content_block_start", { index, content_block: { ...block, input: {} } });
      for (const partial_json of split(JSON.stringify(block.input))) send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } });
    }
    send("content_block_stop", { index });
  }
  send("message_delta", { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: u.output } });
  send("message_stop", {});
  res.end();
}

// ---------------------------------------------------------------- Gemini

async function writeGemini(res: ServerResponse, reply: Reply, stream: boolean): Promise<void> {
  const u = usageOf(reply);
  const usageMetadata = { promptTokenCount: u.input, cachedContentTokenCount: u.cached || undefined, candidatesTokenCount: u.output, totalTokenCount: u.input + u.output };
  const parts: object[] = [];
  if (reply.reasoning) parts.push({ text: reply.reasoning, thought: true });
  const text = pieces(reply);
  const chunk = (p: object[], last: boolean) => ({
    candidates: [{ content: { role: "model", parts: p }, index: 0, ...(last && { finishReason: "STOP" }) }],
    usageMetadata: last ? usageMetadata : { promptTokenCount: u.input, totalTokenCount: u.input },
    modelVersion: "gemini-matrix",
    responseId: "matrixResp",
  });
  const call = reply.toolCall && { functionCall: { name: reply.toolCall.name, args: reply.toolCall.args } };
  if (!stream) {
    if (reply.slow) await sleep(30_000);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(chunk([...parts, ...(text.length ? [{ text: text.join("") }] : []), ...(call ? [call] : [])], true)));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (p: object[], last = false) => res.write(`data: ${JSON.stringify(chunk(p, last))}\r\n\r\n`);
  if (parts.length) send(parts);
  for (const piece of text) {
    if (reply.slow) await sleep(250);
    if (res.destroyed) return;
    send([{ text: piece }]);
  }
  send(call ? [call] : [], true);
  res.end();
}

// ---------------------------------------------------------------- Bedrock Converse

async function writeBedrock(res: ServerResponse, reply: Reply, stream: boolean): Promise<void> {
  const u = usageOf(reply);
  const usage = { inputTokens: u.input - u.cached, outputTokens: u.output, totalTokens: u.input + u.output, cacheReadInputTokens: u.cached, cacheWriteInputTokens: 0 };
  const text = pieces(reply);
  const stopReason = reply.toolCall ? "tool_use" : "end_turn";
  if (!stream) {
    if (reply.slow) await sleep(30_000);
    const content: object[] = [];
    if (reply.reasoning) content.push({ reasoningContent: { reasoningText: { text: reply.reasoning, signature: "sig-matrix" } } });
    if (text.length) content.push({ text: text.join("") });
    if (reply.toolCall) content.push({ toolUse: { toolUseId: reply.toolCall.id, name: reply.toolCall.name, input: reply.toolCall.args } });
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ output: { message: { role: "assistant", content } }, stopReason, usage, metrics: { latencyMs: 12 } }));
    return;
  }
  res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream" });
  const send = (type: string, payload: Record<string, unknown>) => res.write(eventMessage(type, payload));
  send("messageStart", { role: "assistant" });
  let index = 0;
  if (reply.reasoning) {
    for (const part of split(reply.reasoning)) send("contentBlockDelta", { contentBlockIndex: index, delta: { reasoningContent: { text: part } } });
    send("contentBlockDelta", { contentBlockIndex: index, delta: { reasoningContent: { signature: "sig-matrix" } } });
    send("contentBlockStop", { contentBlockIndex: index++ });
  }
  if (text.length) {
    for (const piece of text) {
      if (reply.slow) await sleep(250);
      if (res.destroyed) return;
      send("contentBlockDelta", { contentBlockIndex: index, delta: { text: piece } });
    }
    send("contentBlockStop", { contentBlockIndex: index++ });
  }
  if (reply.toolCall) {
    send("contentBlockStart", { contentBlockIndex: index, start: { toolUse: { toolUseId: reply.toolCall.id, name: reply.toolCall.name } } });
    for (const input of split(JSON.stringify(reply.toolCall.args))) send("contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input } } });
    send("contentBlockStop", { contentBlockIndex: index++ });
  }
  send("messageStop", { stopReason });
  send("metadata", { usage, metrics: { latencyMs: 12 } });
  res.end();
}

// ---------------------------------------------------------------- the upstream types

// Image input declared: the Gemini client format refuses images for a model without it.
const MODALITIES = `modalities: { input: [text, image], output: [text] }`;
const PRICING = `pricing: { input_per_mtok: "1.00", cached_input_per_mtok: "0.10", output_per_mtok: "2.00" }`;
const models = (provider: string, cells: string[]) =>
  cells
    .map((id) => `  - { id: ${id}, kind: chat, provider: ${provider}, upstream_model: "${id}", max_output_tokens: 8192, default_output_tokens: 1000, ${MODALITIES}, ${PRICING} }`)
    .join("\n");
const unknownModel = (res: ServerResponse) => {
  res.writeHead(404, { "content-type": "application/json" });
  res.end(JSON.stringify({ error: { message: "no matrix cell has this model" } }));
};

function base(type: string): Omit<MatrixUpstream, "config" | "close"> & { type: string } {
  return { type, scripts: new Map(), seen: new Map() };
}

/** An OpenAI-compatible upstream: chat-only, or with the Responses API as well. */
export async function openaiUpstream(withResponses: boolean): Promise<MatrixUpstream> {
  const mock = await startMockUpstream();
  const upstream: MatrixUpstream = {
    ...base(withResponses ? "openai-responses" : "openai-chat"),
    config: (cells) =>
      `providers:\n  up: { type: openai, base_url: "${mock.url}/v1", keys: [sk-matrix-openai-0001], apis: ${withResponses ? "[chat, responses]" : "[chat]"} }\nmodels:\n${models("up", cells)}\n`,
    close: () => mock.close(),
  };
  mock.handler = async (req, res) => {
    const model = String(req.body?.model ?? "");
    const isResponses = req.url.startsWith("/v1/responses");
    if (!(req.url.startsWith("/v1/chat/completions") || (withResponses && isResponses))) return unknownModel(res);
    const hit = record(upstream, model, req.url, req.body?.stream === true, req.body, res);
    if (!hit) return unknownModel(res);
    return isResponses ? writeResponses(res, hit.reply, hit.seen.stream, model) : writeChat(res, hit.reply, hit.seen.stream, model);
  };
  return upstream;
}

export async function anthropicUpstream(): Promise<MatrixUpstream> {
  const mock = await startMockUpstream();
  const upstream: MatrixUpstream = {
    ...base("anthropic"),
    config: (cells) => `providers:\n  up: { type: anthropic, base_url: "${mock.url}", keys: [sk-ant-matrix-0001] }\nmodels:\n${models("up", cells)}\n`,
    close: () => mock.close(),
  };
  mock.handler = async (req, res) => {
    const model = String(req.body?.model ?? "");
    if (req.url.startsWith("/v1/messages/count_tokens")) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ input_tokens: INPUT_TOKENS }));
      return;
    }
    if (!req.url.startsWith("/v1/messages")) return unknownModel(res);
    const hit = record(upstream, model, req.url, req.body?.stream === true, req.body, res);
    if (!hit) return unknownModel(res);
    return writeAnthropic(res, hit.reply, hit.seen.stream, model);
  };
  return upstream;
}

export async function azureUpstream(cellModels: string[]): Promise<MatrixUpstream> {
  const key = "azkey0MATRIX000000000000000000aa";
  const mock = await startMockAzure({ keys: [key], deployments: cellModels });
  const upstream: MatrixUpstream = {
    ...base("azure-openai"),
    config: (cells) => `providers:\n  up: { type: azure-openai, base_url: "${mock.url}", keys: ["${key}"] }\nmodels:\n${models("up", cells)}\n`,
    close: () => mock.close(),
  };
  mock.handler = async (req, res) => {
    const hit = record(upstream, req.deployment, req.path, req.body?.stream === true, req.body, res);
    if (!hit) return unknownModel(res);
    if (req.operation === "responses") return writeResponses(res, hit.reply, hit.seen.stream, req.deployment);
    return writeChat(res, hit.reply, hit.seen.stream, req.deployment);
  };
  return upstream;
}

export async function geminiUpstream(): Promise<MatrixUpstream> {
  const key = "AIzaSyMATRIX-gemini-key-000000001";
  const mock = await startGeminiMock([key]);
  const upstream: MatrixUpstream = {
    ...base("gemini"),
    config: (cells) => `providers:\n  up: { type: gemini, base_url: "${mock.url}", keys: ["${key}"] }\nmodels:\n${models("up", cells)}\n`,
    close: () => mock.close(),
  };
  mock.answer = async (req, res) => {
    const hit = record(upstream, req.model, req.path, req.stream, req.body, res);
    if (!hit) return unknownModel(res);
    return writeGemini(res, hit.reply, hit.seen.stream);
  };
  return upstream;
}

export async function bedrockUpstream(): Promise<MatrixUpstream> {
  const credential = { accessKeyId: "AKIAMATRIX0000000001", secretAccessKey: "matrixSecret/0000000000000000000000000000" };
  const mock = await startMockBedrock([credential]);
  const upstream: MatrixUpstream = {
    ...base("bedrock"),
    config: (cells) =>
      `providers:\n  up: { type: bedrock, base_url: "${mock.url}", region: us-east-1, keys: ["${credential.accessKeyId}:${credential.secretAccessKey}"] }\nmodels:\n${models("up", cells)}\n`,
    close: () => mock.close(),
  };
  mock.handler = async (req, res) => {
    const hit = record(upstream, req.modelId, req.path, req.operation === "converse-stream", req.body, res);
    if (!hit) return unknownModel(res);
    return writeBedrock(res, hit.reply, hit.seen.stream);
  };
  return upstream;
}
