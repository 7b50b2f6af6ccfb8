// An Anthropic-native mock that enforces the rules the bridges must meet, and refuses (400, as
// Anthropic does) what breaks them: at most 4 cache_control breakpoints; with thinking on, a budget
// of 1024..max_tokens-1, no temperature other than 1, no forced tool; thinking blocks whose
// signatures it issued itself; and, in a tool loop with thinking on, the assistant turn before the
// tool results opening with its thinking. It simulates the prompt cache: a breakpoint writes the
// prefix up to it, and a later request reads the longest prefix written before, so a cache read
// needs a byte-identical prefix (the thinking blocks sent back included).
import { createHash, createHmac } from "node:crypto";
import type { ServerResponse } from "node:http";
import { json, type MockHandler, type RecordedRequest } from "./mock-upstream.js";

const SIGNING_KEY = "strict-anthropic-mock";

export function signThinking(text: string): string {
  return createHmac("sha256", SIGNING_KEY).update(text).digest("base64");
}

export interface StrictTurn {
  /** 1-based count of accepted requests. */
  turn: number;
  breakpoints: number;
  thinking: boolean;
  cacheRead: number;
  cacheWrite: number;
  input: number;
}

export interface StrictReply {
  thinking?: string;
  /** Also send a redacted_thinking block (its data signed like a signature). */
  redacted?: boolean;
  text?: string;
  tool?: { id: string; name: string; input: Record<string, unknown> };
}

export interface StrictAnthropic {
  handler: MockHandler;
  turns: StrictTurn[];
  /** Refusal messages, in order. */
  refusals: string[];
}

type Json = Record<string, any>;

const tokens = (text: string) => Math.ceil(text.length / 4);
const digest = (text: string) => createHash("sha256").update(text).digest("hex");

export function strictAnthropic(reply: (turn: number, body: Json) => StrictReply): StrictAnthropic {
  const written = new Set<string>();
  const turns: StrictTurn[] = [];
  const refusals: string[] = [];
  const handler: MockHandler = (req: RecordedRequest, res: ServerResponse) => {
    const body = req.body as Json;
    const problem = violation(body);
    if (problem !== null) {
      refusals.push(problem);
      return json(res, 400, { type: "error", error: { type: "invalid_request_error", message: problem } });
    }
    const { items, marks } = cacheItems(body);
    const prefixes = marks.map((end) => JSON.stringify(items.slice(0, end + 1)));
    let read = 0;
    for (const prefix of prefixes) if (written.has(digest(prefix))) read = Math.max(read, tokens(prefix));
    const longest = prefixes.length > 0 ? tokens(prefixes.at(-1)!) : 0;
    for (const prefix of prefixes) written.add(digest(prefix));
    const total = tokens(JSON.stringify(items));
    const write = Math.max(0, longest - read);
    const turn: StrictTurn = {
      turn: turns.length + 1,
      breakpoints: marks.length,
      thinking: body.thinking?.type === "enabled",
      cacheRead: read,
      cacheWrite: write,
      input: total - read - write,
    };
    turns.push(turn);
    const answer = reply(turn.turn, body);
    const given = turn.thinking ? answer : { ...answer, thinking: undefined, redacted: false };
    return body.stream === true ? stream(res, turn, given) : json(res, 200, message(turn, given));
  };
  return { handler, turns, refusals };
}

/** Everything a cache prefix covers, in Anthropic's order, without the markers; `marks` indexes the marked items. */
function cacheItems(body: Json): { items: unknown[]; marks: number[] } {
  const items: unknown[] = [];
  const marks: number[] = [];
  const add = (value: Json, role?: string) => {
    const { cache_control, ...rest } = value;
    items.push(role ? { role, ...rest } : rest);
    if (cache_control !== undefined) marks.push(items.length - 1);
  };
  for (const tool of body.tools ?? []) add(tool);
  if (typeof body.system === "string") items.push(body.system);
  else for (const block of body.system ?? []) add(block);
  for (const message of body.messages ?? []) {
    if (typeof message.content === "string") items.push({ role: message.role, text: message.content });
    else for (const block of message.content) add(block, message.role);
  }
  return { items, marks };
}

function violation(body: Json): string | null {
  const markers: unknown[] = [];
  const collect = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(collect);
    else if (value && typeof value === "object") {
      const record = value as Json;
      if (record.cache_control !== undefined) markers.push(record.cache_control);
      Object.values(record).forEach(collect);
    }
  };
  collect([body.tools, body.system, body.messages]);
  if (markers.length > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${markers.length}.`;
  for (const marker of markers) {
    const m = marker as Json;
    if (m?.type !== "ephemeral" || (m.ttl !== undefined && m.ttl !== "5m" && m.ttl !== "1h")) return "cache_control: invalid";
  }
  if (!Array.isArray(body.messages) || body.messages[0]?.role !== "user") return "messages: first message must use the user role";
  for (let i = 1; i < body.messages.length; i++) if (body.messages[i].role === body.messages[i - 1].role) return `messages.${i}: roles must alternate`;
  for (const [i, message] of body.messages.entries()) {
    if (!Array.isArray(message.content)) continue;
    for (const [j, block] of message.content.entries()) {
      if (block.type === "thinking" && block.signature !== signThinking(block.thinking)) return `messages.${i}.content.${j}: Invalid signature in thinking block`;
      if (block.type === "redacted_thinking" && !String(block.data).startsWith("redacted:")) return `messages.${i}.content.${j}: Invalid redacted_thinking data`;
      if ((block.type === "thinking" || block.type === "redacted_thinking") && message.role !== "assistant") return `messages.${i}: thinking outside an assistant turn`;
    }
  }
  const thinking = body.thinking;
  if (thinking !== undefined && thinking.type === "enabled") {
    if (!(thinking.budget_tokens >= 1024)) return "thinking.budget_tokens: must be at least 1024";
    if (!(thinking.budget_tokens < body.max_tokens)) return "`max_tokens` must be greater than `thinking.budget_tokens`";
    if (body.temperature !== undefined && body.temperature !== 1) return "`temperature` may only be set to 1 when thinking is enabled";
    if (body.top_k !== undefined) return "`top_k` may not be set when thinking is enabled";
    if (body.tool_choice?.type === "any" || body.tool_choice?.type === "tool") return "Thinking may not be enabled when tool_choice forces tool use.";
    const last = body.messages.at(-1);
    if (last?.role === "user" && Array.isArray(last.content) && last.content.some((b: Json) => b.type === "tool_result")) {
      const first = body.messages.at(-2)?.content?.[0];
      if (first?.type !== "thinking" && first?.type !== "redacted_thinking") {
        return `messages.${body.messages.length - 2}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
      }
    }
  }
  return null;
}

/** The content blocks of a reply, and its output tokens. */
function blocks(turn: StrictTurn, answer: StrictReply): { content: Json[]; output: number } {
  const content: Json[] = [];
  let output = 0;
  if (answer.thinking !== undefined) {
    content.push({ type: "thinking", thinking: answer.thinking, signature: signThinking(answer.thinking) });
    output += tokens(answer.thinking) * 3;
  }
  if (answer.redacted) content.push({ type: "redacted_thinking", data: `redacted:${signThinking(String(turn.turn))}` });
  if (answer.text !== undefined) {
    content.push({ type: "text", text: answer.text, citations: null });
    output += tokens(answer.text);
  }
  if (answer.tool !== undefined) {
    content.push({ type: "tool_use", ...answer.tool });
    output += 10;
  }
  return { content, output };
}

function message(turn: StrictTurn, answer: StrictReply): Json {
  const { content, output } = blocks(turn, answer);
  return {
    id: `msg_strict_${turn.turn}`,
    type: "message",
    role: "assistant",
    model: "claude-upstream",
    content,
    stop_reason: answer.tool ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: turn.input, cache_read_input_tokens: turn.cacheRead, cache_creation_input_tokens: turn.cacheWrite, output_tokens: output },
  };
}

function stream(res: ServerResponse, turn: StrictTurn, answer: StrictReply): void {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (event: string, data: object) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...data })}\n\n`);
  const usage = { input_tokens: turn.input, cache_read_input_tokens: turn.cacheRead, cache_creation_input_tokens: turn.cacheWrite, output_tokens: 1 };
  send("message_start", {
    message: { id: `msg_strict_${turn.turn}`, type: "message", role: "assistant", model: "claude-upstream", content: [], stop_reason: null, stop_sequence: null, usage },
  });
  let index = 0;
  let output = 0;
  if (answer.thinking !== undefined) {
    send("content_block_start", { index, content_block: { type: "thinking", thinking: "", signature: "" } });
    const half = Math.ceil(answer.thinking.length / 2);
    for (const piece of [answer.thinking.slice(0, half), answer.thinking.slice(half)]) send("content_block_delta", { index, delta: { type: "thinking_delta", thinking: piece } });
    send("content_block_delta", { index, delta: { type: "signature_delta", signature: signThinking(answer.thinking) } });
    send("content_block_stop", { index });
    output += tokens(answer.thinking) * 3;
    index += 1;
  }
  if (answer.redacted) {
    send("content_block_start", { index, content_block: { type: "redacted_thinking", data: `redacted:${signThinking(String(turn.turn))}` } });
    send("content_block_stop", { index });
    index += 1;
  }
  if (answer.text !== undefined) {
    send("content_block_start", { index, content_block: { type: "text", text: "" } });
    send("content_block_delta", { index, delta: { type: "text_delta", text: answer.text } });
    send("content_block_stop", { index });
    output += tokens(answer.text);
    index += 1;
  }
  if (answer.tool !== undefined) {
    send("content_block_start", { index, content_block: { type: "tool_use", id: answer.tool.id, name: answer.tool.name, input: {} } });
    send("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: JSON.stringify(answer.tool.input) } });
    send("content_block_stop", { index });
    output += 10;
  }
  send("message_delta", { delta: { stop_reason: answer.tool ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: output } });
  send("message_stop", {});
  res.end();
}
