// Responses request -> Chat Completions request, for Responses clients (Codex CLI) on Chat upstreams.
// Stateless: the caller resolves previous_response_id into `history` before calling.
import { invalidRequest } from "../../errors/catalogue.js";
import { setTokenLimit, type ChatTargetOptions } from "../../wire/chat/chat-target-options.js";
import type { ChatMessage, ChatReasoningEffort, ChatRequest, ChatResponseFormat } from "../../wire/chat/types.js";
import { isNumber, isRecord, isString, WarningList } from "../../wire/shared/narrow.js";
import { convertResponsesInputToChat, dropOrphanToolMessages } from "./convert-responses-input-to-chat.js";
import { convertResponsesToolChoiceToChat, convertResponsesToolsToChat, type ToolNamespaces } from "./convert-responses-tools-to-chat.js";

export interface ResponsesToChatOptions extends ChatTargetOptions {
  /** Messages of the previous turns (from the store), placed before this request's input. */
  history?: ChatMessage[];
  /** Whether the upstream takes `reasoning_effort`; otherwise reasoning.effort is dropped with a warning. */
  upstreamAcceptsReasoningEffort?: boolean;
}

export interface ResponsesToChatResult {
  request: ChatRequest;
  warnings: string[];
  /** history + this input, without instructions (which are not inherited): the base to store for continuation. */
  conversation: ChatMessage[];
  /** Flattened namespace tool names, to restore `namespace` on function_call items in the reply. */
  toolNamespaces: ToolNamespaces;
}

/** Consumed here, or deliberately not sent upstream (store, include, previous_response_id, stream_options). */
const HANDLED_FIELDS = new Set([
  "model",
  "input",
  "instructions",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "max_output_tokens",
  "text",
  "reasoning",
  "temperature",
  "top_p",
  "user",
  "metadata",
  "stream",
  "store",
  "include",
  "previous_response_id",
  "stream_options",
]);

const REASONING_EFFORTS = new Set(["none", "minimal", "low", "medium", "high", "xhigh", "max"]);

export function convertResponsesRequestToChat(body: unknown, options: ResponsesToChatOptions = {}): ResponsesToChatResult {
  if (!isRecord(body)) throw invalidRequest("body", "The request body must be a JSON object.");
  if (!isString(body.model) || body.model === "") throw invalidRequest("model", "model is required.");
  const warnings = new WarningList();
  const systemRole = options.systemRole ?? "system";
  const conversation = dropOrphanToolMessages([...(options.history ?? []), ...convertResponsesInputToChat(body.input, systemRole, warnings)], warnings);
  const messages: ChatMessage[] = [];
  if (isString(body.instructions) && body.instructions !== "") messages.push({ role: systemRole, content: body.instructions });
  messages.push(...conversation);
  const request: ChatRequest = { model: body.model, messages };

  const { tools, toolNamespaces } = convertResponsesToolsToChat(body.tools, warnings);
  if (tools.length > 0) {
    request.tools = tools;
    const choice = convertResponsesToolChoiceToChat(body.tool_choice, warnings);
    if (choice !== undefined) request.tool_choice = choice;
    if (typeof body.parallel_tool_calls === "boolean") request.parallel_tool_calls = body.parallel_tool_calls;
  }
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null) {
    if (!isNumber(body.max_output_tokens) || body.max_output_tokens < 1) throw invalidRequest("max_output_tokens", "max_output_tokens must be a positive integer.");
    setTokenLimit(request, body.max_output_tokens, options);
  }
  applyText(body.text, request, warnings);
  applyReasoning(body.reasoning, request, options, warnings);
  for (const key of ["temperature", "top_p"] as const) {
    const value = body[key];
    if (value === undefined || value === null) continue;
    if (!isNumber(value)) throw invalidRequest(key, `${key} must be a number.`);
    request[key] = value;
  }
  if (isString(body.user)) request.user = body.user;
  if (isRecord(body.metadata) && Object.keys(body.metadata).length > 0) {
    request.metadata = Object.fromEntries(Object.entries(body.metadata).filter((entry): entry is [string, string] => isString(entry[1])));
  }
  if (body.stream === true) {
    request.stream = true;
    // response.completed must carry usage, which Chat only streams with include_usage.
    request.stream_options = { include_usage: true };
  }
  for (const key of Object.keys(body)) {
    if (!HANDLED_FIELDS.has(key) && body[key] !== null) warnings.add(`${key}: dropped (no Chat Completions equivalent)`);
  }
  return { request, warnings: warnings.toArray(), conversation, toolNamespaces };
}

function applyText(text: unknown, request: ChatRequest, warnings: WarningList): void {
  if (!isRecord(text)) return;
  if (text.verbosity !== undefined && text.verbosity !== null) warnings.add("text.verbosity: dropped (not sent to Chat upstreams)");
  const format = text.format;
  if (!isRecord(format)) return;
  let converted: ChatResponseFormat | undefined;
  switch (format.type) {
    case "text":
      return;
    case "json_object":
      converted = { type: "json_object" };
      break;
    case "json_schema": {
      if (!isString(format.name)) throw invalidRequest("text.format.name", "text.format.name is required for json_schema.");
      const schema: Extract<ChatResponseFormat, { type: "json_schema" }>["json_schema"] = { name: format.name };
      if (isRecord(format.schema)) schema.schema = format.schema;
      if (isString(format.description)) schema.description = format.description;
      if (typeof format.strict === "boolean") schema.strict = format.strict;
      converted = { type: "json_schema", json_schema: schema };
      break;
    }
    default:
      throw invalidRequest("text.format.type", "text.format.type must be text, json_object or json_schema.");
  }
  request.response_format = converted;
}

function applyReasoning(reasoning: unknown, request: ChatRequest, options: ResponsesToChatOptions, warnings: WarningList): void {
  if (!isRecord(reasoning)) return;
  const effort = reasoning.effort;
  if (isString(effort)) {
    if (options.upstreamAcceptsReasoningEffort === true && REASONING_EFFORTS.has(effort)) request.reasoning_effort = effort as ChatReasoningEffort;
    else warnings.add("reasoning.effort: dropped (the upstream model does not take it)");
  }
  // reasoning.summary has no Chat equivalent and is silently not sent.
}
