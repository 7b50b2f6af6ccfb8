// Chat Completions request -> Anthropic Messages request, for Chat clients on Anthropic-native upstreams.
import { invalidRequest } from "../../errors/catalogue.js";
import { isNumber, isRecord, isString, WarningList } from "../../wire/shared/narrow.js";
import { objectSchema, readChatFunctionTools } from "../../wire/shared/chat-content.js";
import { handledFields, readOutputLimit, readStopSequences, readUnitTemperature, warnDroppedFields } from "../../wire/shared/chat-request.js";
import { isReasoningEffort, MIN_THINKING_BUDGET, THINKING_BUDGET_BY_EFFORT } from "../../wire/shared/reasoning.js";
import { placeCacheBreakpoints, readCacheControl, type CacheBreakpointMode } from "../../wire/messages/cache-breakpoints.js";
import { convertChatMessagesToTurns } from "./convert-chat-messages-to-turns.js";
import type { AnthropicMessagesRequest, AnthropicTool, AnthropicToolChoice } from "../../wire/messages/types.js";

export interface ChatToMessagesRequestOptions {
  /** Anthropic requires max_tokens; used when the client sent neither max_tokens nor max_completion_tokens. */
  defaultMaxTokens: number;
  /** The model's output limit, if configured: a limit raised to make room for thinking stays within it. */
  maxOutputTokens?: number | null;
  /** Automatic cache breakpoints; default "auto". */
  cacheBreakpoints?: CacheBreakpointMode;
}

/** Anthropic takes top_p from this value up when thinking is on. */
const MIN_TOP_P_WITH_THINKING = 0.95;

/** Fields consumed here beyond the common ones (chat-request.ts). */
const HANDLED_FIELDS = handledFields(["user"]);

export function convertChatRequestToMessages(body: unknown, options: ChatToMessagesRequestOptions): { request: AnthropicMessagesRequest; warnings: string[] } {
  if (!isRecord(body)) throw invalidRequest("body", "The request body must be a JSON object.");
  const warnings = new WarningList();
  if (!isString(body.model) || body.model === "") throw invalidRequest("model", "model is required.");
  if (!Array.isArray(body.messages)) throw invalidRequest("messages", "messages must be an array.");
  if (body.n !== undefined && body.n !== null && body.n !== 1) {
    throw invalidRequest("n", "n must be 1 for this model: the upstream returns a single choice.");
  }
  const { system, turns } = convertChatMessagesToTurns(body.messages, warnings);
  const limit = readOutputLimit(body);
  const request: AnthropicMessagesRequest = { model: body.model, max_tokens: limit ?? options.defaultMaxTokens, messages: turns };
  if (system !== undefined) request.system = system;

  const temperature = readUnitTemperature(body.temperature, "Anthropic", warnings);
  if (temperature !== undefined) request.temperature = temperature;
  if (isNumber(body.top_p)) request.top_p = body.top_p;
  const stop = readStopSequences(body.stop);
  if (stop !== undefined) request.stop_sequences = stop;
  if (isString(body.user)) request.metadata = { user_id: body.user };
  if (body.stream === true) request.stream = true;
  applyTools(body, request, warnings);
  applyThinking(body.reasoning_effort, request, limit === undefined ? options : undefined, warnings);
  placeCacheBreakpoints(request, options.cacheBreakpoints ?? "auto");

  warnDroppedFields(body, HANDLED_FIELDS, "Anthropic Messages", warnings);
  return { request, warnings: warnings.toArray() };
}

/**
 * reasoning_effort -> Anthropic extended thinking (docs/clients.md, "Reasoning"): the table's budget.
 * A client that set a limit keeps it, thinking included, and thinking gets at most half of it; one
 * that set none gets the budget added to the default limit (within the model's own).
 * Thinking stays off, with a warning, where Anthropic would refuse it. Also used for Claude models
 * on Bedrock Converse, which take the same thinking object and rules.
 */
export function applyThinking(
  effort: unknown,
  request: AnthropicMessagesRequest,
  defaults: Pick<ChatToMessagesRequestOptions, "defaultMaxTokens" | "maxOutputTokens"> | undefined,
  warnings: WarningList,
): void {
  if (effort === undefined || effort === null) return dropThinkingBlocks(request);
  if (!isReasoningEffort(effort)) throw invalidRequest("reasoning_effort", "reasoning_effort must be one of none, minimal, low, medium, high, xhigh, max.");
  if (effort === "none") return dropThinkingBlocks(request);
  const choice = request.tool_choice?.type;
  if (choice === "any" || choice === "tool") {
    warnings.add("reasoning_effort: not sent, Anthropic takes no thinking with a forced tool choice");
    return dropThinkingBlocks(request);
  }
  if (toolLoopWithoutThinking(request)) {
    warnings.add("reasoning_effort: not sent, the last tool call came back without its thinking_blocks (Anthropic requires them)");
    return dropThinkingBlocks(request);
  }
  const wanted = THINKING_BUDGET_BY_EFFORT[effort];
  let limit = request.max_tokens;
  // The answer keeps the default limit when there is room for it, else half.
  let room = Math.floor(limit / 2);
  if (defaults !== undefined) {
    limit = Math.min(defaults.defaultMaxTokens + wanted, defaults.maxOutputTokens ?? Number.MAX_SAFE_INTEGER);
    room = Math.max(limit - defaults.defaultMaxTokens, Math.floor(limit / 2));
  }
  const budget = Math.min(wanted, room);
  if (budget < MIN_THINKING_BUDGET) {
    warnings.add(`reasoning_effort: not sent, max_tokens must be at least ${2 * MIN_THINKING_BUDGET} for Anthropic thinking`);
    return dropThinkingBlocks(request);
  }
  request.max_tokens = limit;
  request.thinking = { type: "enabled", budget_tokens: budget };
  if (request.temperature !== undefined && request.temperature !== 1) {
    warnings.add("temperature: dropped, Anthropic takes none other than 1 with thinking");
    delete request.temperature;
  }
  if (request.top_p !== undefined && request.top_p < MIN_TOP_P_WITH_THINKING) {
    warnings.add(`top_p: dropped, Anthropic takes none below ${MIN_TOP_P_WITH_THINKING} with thinking`);
    delete request.top_p;
  }
}

/** The conversation ends in tool results whose assistant turn does not open with thinking: Anthropic refuses thinking then. */
function toolLoopWithoutThinking(request: AnthropicMessagesRequest): boolean {
  const turns = request.messages;
  const last = turns.at(-1);
  if (last?.role !== "user" || !Array.isArray(last.content) || !last.content.some((block) => block.type === "tool_result")) return false;
  const assistant = turns.at(-2);
  if (assistant?.role !== "assistant" || !Array.isArray(assistant.content)) return false;
  const first = assistant.content[0];
  return first?.type !== "thinking" && first?.type !== "redacted_thinking";
}

/** Without thinking on, earlier thinking blocks are left out: they only matter to a thinking request. */
function dropThinkingBlocks(request: AnthropicMessagesRequest): void {
  for (const turn of request.messages) {
    if (turn.role === "assistant" && Array.isArray(turn.content)) turn.content = turn.content.filter((block) => block.type !== "thinking" && block.type !== "redacted_thinking");
  }
  request.messages = request.messages.filter((turn) => !Array.isArray(turn.content) || turn.content.length > 0);
}

function applyTools(body: Record<string, unknown>, request: AnthropicMessagesRequest, warnings: WarningList): void {
  const tools = readChatFunctionTools(body, warnings).map(({ at, name, description, parameters, cacheControl }): AnthropicTool => {
    const marker = readCacheControl(cacheControl, `${at}.cache_control`);
    return {
      name,
      input_schema: objectSchema(parameters),
      ...(description !== undefined ? { description } : {}),
      ...(marker !== undefined ? { cache_control: marker } : {}),
    };
  });
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
