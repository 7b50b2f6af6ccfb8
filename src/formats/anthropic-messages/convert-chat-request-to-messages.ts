// Chat Completions request -> Anthropic Messages request, for Chat clients on Anthropic-native upstreams.
import { invalidRequest } from "../../errors/catalogue.js";
import { isNumber, isRecord, isString, WarningList } from "../shared/narrow.js";
import { objectSchema, readChatFunctionTools } from "../shared/chat-content.js";
import { convertChatMessagesToTurns } from "./convert-chat-messages-to-turns.js";
import type { AnthropicMessagesRequest, AnthropicTool, AnthropicToolChoice } from "./types.js";

export interface ChatToMessagesRequestOptions {
  /** Anthropic requires max_tokens; used when the client sent neither max_tokens nor max_completion_tokens. */
  defaultMaxTokens: number;
}

/** Fields consumed here, or meaningless upstream (stream_options: Anthropic always reports usage). */
const HANDLED_FIELDS = new Set([
  "model",
  "messages",
  "max_tokens",
  "max_completion_tokens",
  "n",
  "stop",
  "temperature",
  "top_p",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "user",
  "stream",
  "stream_options",
]);

export function convertChatRequestToMessages(body: unknown, options: ChatToMessagesRequestOptions): { request: AnthropicMessagesRequest; warnings: string[] } {
  if (!isRecord(body)) throw invalidRequest("body", "The request body must be a JSON object.");
  const warnings = new WarningList();
  if (!isString(body.model) || body.model === "") throw invalidRequest("model", "model is required.");
  if (!Array.isArray(body.messages)) throw invalidRequest("messages", "messages must be an array.");
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    throw invalidRequest("n", "n must be 1 for this model: the upstream returns a single choice.");
  }
  const { system, turns } = convertChatMessagesToTurns(body.messages, warnings);
  const request: AnthropicMessagesRequest = { model: body.model, max_tokens: maxTokens(body, options), messages: turns };
  if (system !== undefined) request.system = system;

  if (isNumber(body.temperature)) {
    // OpenAI allows 0-2, Anthropic 0-1.
    if (body.temperature > 1) warnings.add("temperature: clamped to 1 (Anthropic maximum)");
    request.temperature = Math.min(body.temperature, 1);
  }
  if (isNumber(body.top_p)) request.top_p = body.top_p;
  if (isString(body.stop)) request.stop_sequences = [body.stop];
  else if (Array.isArray(body.stop) && body.stop.length > 0) {
    if (!body.stop.every(isString)) throw invalidRequest("stop", "stop must be a string or an array of strings.");
    request.stop_sequences = body.stop;
  }
  if (isString(body.user)) request.metadata = { user_id: body.user };
  if (body.stream === true) request.stream = true;
  applyTools(body, request, warnings);

  for (const key of Object.keys(body)) {
    if (!HANDLED_FIELDS.has(key) && body[key] !== null) warnings.add(`${key}: dropped (no Anthropic Messages equivalent)`);
  }
  return { request, warnings: warnings.toArray() };
}

function maxTokens(body: Record<string, unknown>, options: ChatToMessagesRequestOptions): number {
  for (const key of ["max_completion_tokens", "max_tokens"] as const) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (!isNumber(value) || value < 1) throw invalidRequest(key, `${key} must be a positive integer.`);
    return value;
  }
  return options.defaultMaxTokens;
}

function applyTools(body: Record<string, unknown>, request: AnthropicMessagesRequest, warnings: WarningList): void {
  const tools = readChatFunctionTools(body, warnings).map(({ name, description, parameters }): AnthropicTool => ({
    name,
    input_schema: objectSchema(parameters),
    ...(description !== undefined ? { description } : {}),
  }));
  if (tools.length === 0) return;
  request.tools = tools;
  const choice = convertToolChoice(body.tool_choice, warnings);
  if (body.parallel_tool_calls === false) {
    // Anthropic carries this flag on tool_choice, so an implicit auto choice is made explicit.
    const base = choice ?? { type: "auto" };
    request.tool_choice = base.type === "none" ? base : { ...base, disable_parallel_tool_use: true };
  } else if (choice !== undefined) {
    request.tool_choice = choice;
  }
}

function convertToolChoice(choice: unknown, warnings: WarningList): AnthropicToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === "auto") return { type: "auto" };
  if (choice === "required") return { type: "any" };
  if (choice === "none") return { type: "none" };
  if (isRecord(choice) && choice.type === "function") {
    const fn = choice.function;
    if (!isRecord(fn) || !isString(fn.name)) throw invalidRequest("tool_choice.function.name", "tool_choice.function.name is required.");
    return { type: "tool", name: fn.name };
  }
  if (isRecord(choice) && choice.type === "allowed_tools") {
    warnings.add("tool_choice allowed_tools: sent as auto/any over all tools (Anthropic has no allow-list)");
    const allowed = choice.allowed_tools;
    return isRecord(allowed) && allowed.mode === "required" ? { type: "any" } : { type: "auto" };
  }
  throw invalidRequest("tool_choice", "tool_choice must be none, auto, required or a function choice.");
}
