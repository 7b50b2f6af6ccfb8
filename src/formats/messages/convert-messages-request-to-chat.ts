// Anthropic Messages request -> Chat Completions request, for Messages clients (Claude Code) on Chat
// upstreams. Fields without a Chat equivalent are dropped and named in `warnings`, never rejected.
import { invalidRequest } from "../../errors/catalogue.js";
import { setTokenLimit, type ChatTargetOptions } from "../../wire/chat/chat-target-options.js";
import type { ChatFunctionTool, ChatMessage, ChatRequest, ChatTextPart, ChatToolChoice } from "../../wire/chat/types.js";
import { isNumber, isRecord, isString, WarningList, type JsonObject } from "../../wire/shared/narrow.js";
import { effortForThinkingBudget } from "../../wire/shared/reasoning.js";
import { readCacheControl } from "../../wire/messages/cache-breakpoints.js";
import { convertMessagesTurnToChat, joinSystemText, type TurnOptions } from "./convert-messages-turn-to-chat.js";

export interface MessagesToChatRequestOptions extends ChatTargetOptions {
  /** The upstream takes reasoning_effort: `thinking` becomes one (else it is dropped with a warning). */
  reasoningEffort?: boolean;
  /** Keep cache_control markers on the Chat parts and tools (prompt_caching: forward); else they are dropped with a warning. */
  keepCacheControl?: boolean;
}

/** Top-level fields translated below (or consumed silently); anything else is dropped with a warning. */
const HANDLED_FIELDS = new Set(["model", "messages", "system", "max_tokens", "tools", "tool_choice", "stop_sequences", "temperature", "top_p", "metadata", "stream", "thinking"]);

/** Chat accepts at most four stop sequences. */
const MAX_STOP_SEQUENCES = 4;

export function convertMessagesRequestToChat(body: unknown, options: MessagesToChatRequestOptions = {}): { request: ChatRequest; warnings: string[] } {
  if (!isRecord(body)) throw invalidRequest("body", "The request body must be a JSON object.");
  const warnings = new WarningList();
  const turnOptions: TurnOptions = { systemRole: options.systemRole ?? "system", keepCacheControl: options.keepCacheControl === true };
  if (!isString(body.model) || body.model === "") throw invalidRequest("model", "model is required.");
  if (!Array.isArray(body.messages)) throw invalidRequest("messages", "messages must be an array.");

  const messages: ChatMessage[] = [];
  const system = convertSystem(body.system, turnOptions, warnings);
  if (system !== undefined) messages.push({ role: turnOptions.systemRole, content: system });
  body.messages.forEach((turn, i) => messages.push(...convertMessagesTurnToChat(turn, `messages[${i}]`, turnOptions, warnings)));

  const request: ChatRequest = { model: body.model, messages };
  if (body.max_tokens !== undefined) {
    if (!isNumber(body.max_tokens) || body.max_tokens < 0) throw invalidRequest("max_tokens", "max_tokens must be a non-negative integer.");
    setTokenLimit(request, body.max_tokens, options);
  }
  copyNumber(body, "temperature", request);
  copyNumber(body, "top_p", request);
  applyStopSequences(body.stop_sequences, request, warnings);
  applyTools(body.tools, body.tool_choice, request, turnOptions, warnings);
  applyThinking(body.thinking, request, options.reasoningEffort === true, warnings);
  if (isRecord(body.metadata) && isString(body.metadata.user_id)) request.user = body.metadata.user_id;
  if (body.stream === true) {
    request.stream = true;
    // Usage arrives only with include_usage; the Anthropic message_delta needs it.
    request.stream_options = { include_usage: true };
  }
  for (const key of Object.keys(body)) {
    if (!HANDLED_FIELDS.has(key)) warnings.add(`${key}: dropped (no Chat Completions equivalent)`);
  }
  return { request, warnings: warnings.toArray() };
}

function convertSystem(system: unknown, options: TurnOptions, warnings: WarningList): string | ChatTextPart[] | undefined {
  if (system === undefined || system === null) return undefined;
  if (isString(system)) return system === "" ? undefined : system;
  if (!Array.isArray(system)) throw invalidRequest("system", "system must be a string or an array of text blocks.");
  const text = joinSystemText(system, "system");
  if (system.some((block) => isRecord(block) && block.cache_control !== undefined)) {
    if (!options.keepCacheControl) warnings.add("cache_control: dropped (no Chat Completions equivalent)");
    // Forwarded markers keep their blocks: a marker caches the prefix up to its own block.
    else return system.map((block: JsonObject, j: number) => textPart(block, `system[${j}]`));
  }
  return text === "" ? undefined : text;
}

function textPart(block: JsonObject, path: string): ChatTextPart {
  const marker = readCacheControl(block.cache_control, `${path}.cache_control`);
  return { type: "text", text: String(block.text), ...(marker ? { cache_control: marker } : {}) };
}

/**
 * Anthropic thinking -> reasoning_effort (docs/clients.md, "Reasoning"): the effort whose budget
 * the client's budget_tokens reaches, for an upstream that takes reasoning_effort.
 */
function applyThinking(thinking: unknown, request: ChatRequest, upstreamTakesEffort: boolean, warnings: WarningList): void {
  if (thinking === undefined || thinking === null) return;
  if (!isRecord(thinking) || !isString(thinking.type)) throw invalidRequest("thinking", "thinking must be an object with a type.");
  if (thinking.type === "disabled") return;
  let effort: "low" | "medium" | "high";
  if (thinking.type === "enabled") {
    if (!isNumber(thinking.budget_tokens) || thinking.budget_tokens < 0) throw invalidRequest("thinking.budget_tokens", "thinking.budget_tokens must be a non-negative integer.");
    effort = effortForThinkingBudget(thinking.budget_tokens);
  } else if (thinking.type === "adaptive") effort = "medium";
  else throw invalidRequest("thinking.type", "thinking.type must be enabled, disabled or adaptive.");
  if (upstreamTakesEffort) request.reasoning_effort = effort;
  else warnings.add("thinking: dropped (the upstream model takes no reasoning_effort)");
}

function copyNumber(body: Record<string, unknown>, key: "temperature" | "top_p", request: ChatRequest): void {
  const value = body[key];
  if (value === undefined || value === null) return;
  if (!isNumber(value)) throw invalidRequest(key, `${key} must be a number.`);
  request[key] = value;
}

function applyStopSequences(value: unknown, request: ChatRequest, warnings: WarningList): void {
  if (value === undefined || value === null) return;
  if (!Array.isArray(value) || !value.every(isString)) throw invalidRequest("stop_sequences", "stop_sequences must be an array of strings.");
  if (value.length === 0) return;
  if (value.length > MAX_STOP_SEQUENCES) warnings.add(`stop_sequences: only the first ${MAX_STOP_SEQUENCES} are sent (Chat limit)`);
  request.stop = value.slice(0, MAX_STOP_SEQUENCES);
}

function applyTools(toolsValue: unknown, choiceValue: unknown, request: ChatRequest, options: TurnOptions, warnings: WarningList): void {
  if (toolsValue !== undefined && toolsValue !== null && !Array.isArray(toolsValue)) {
    throw invalidRequest("tools", "tools must be an array.");
  }
  const tools: ChatFunctionTool[] = [];
  (toolsValue ?? []).forEach((tool: unknown, i: number) => {
    if (!isRecord(tool) || !isString(tool.name)) throw invalidRequest(`tools[${i}].name`, `tools[${i}] must have a name.`);
    if (tool.type !== undefined && tool.type !== "custom") {
      warnings.add(`tools[${i}] (${String(tool.type)}): dropped, server tools have no Chat equivalent`);
      return;
    }
    const fn: ChatFunctionTool["function"] = { name: tool.name };
    if (isString(tool.description)) fn.description = tool.description;
    if (isRecord(tool.input_schema)) fn.parameters = tool.input_schema;
    if (typeof tool.strict === "boolean") fn.strict = tool.strict;
    const marker = options.keepCacheControl ? readCacheControl(tool.cache_control, `tools[${i}].cache_control`) : undefined;
    if (tool.cache_control !== undefined && !options.keepCacheControl) warnings.add("cache_control: dropped (no Chat Completions equivalent)");
    tools.push({ type: "function", function: fn, ...(marker ? { cache_control: marker } : {}) });
  });
  // Never send `tools: []` (Claude Code does): several upstreams reject an empty list, and tool_choice without tools.
  if (tools.length === 0) {
    if (choiceValue !== undefined && choiceValue !== null) warnings.add("tool_choice: dropped because no tools are sent");
    return;
  }
  request.tools = tools;
  if (choiceValue === undefined || choiceValue === null) return;
  if (!isRecord(choiceValue)) throw invalidRequest("tool_choice", "tool_choice must be an object.");
  const choice = convertToolChoice(choiceValue);
  if (choice !== undefined) request.tool_choice = choice;
  if (choiceValue.disable_parallel_tool_use === true) request.parallel_tool_calls = false;
}

function convertToolChoice(choice: Record<string, unknown>): ChatToolChoice | undefined {
  switch (choice.type) {
    case "auto":
      return "auto";
    case "any":
      return "required";
    case "none":
      return "none";
    case "tool":
      if (!isString(choice.name)) throw invalidRequest("tool_choice.name", 'tool_choice.name is required when type is "tool".');
      return { type: "function", function: { name: choice.name } };
    default:
      throw invalidRequest("tool_choice.type", "tool_choice.type must be one of auto, any, tool, none.");
  }
}
