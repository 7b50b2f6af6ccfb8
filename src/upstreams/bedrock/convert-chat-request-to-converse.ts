// Chat Completions request -> Bedrock Converse request (the model goes in the URL, not the body).
// Messages become alternating turns the way they do for Anthropic (Converse has the same rules:
// tool results in a user turn, first; consecutive same-role turns merged), then Converse blocks.
import { invalidRequest } from "../../errors/catalogue.js";
import { convertChatMessagesToTurns } from "../anthropic/convert-chat-messages-to-turns.js";
import { applyThinking } from "../anthropic/convert-chat-request-to-messages.js";
import { objectSchema, readChatFunctionTools } from "../../wire/shared/chat-content.js";
import { handledFields, readOutputLimit, readStopSequences, readUnitTemperature, warnDroppedFields } from "../../wire/shared/chat-request.js";
import type { AnthropicContentBlockParam, AnthropicMessageParam, AnthropicMessagesRequest } from "../../wire/messages/types.js";
import { isNumber, isRecord, isString, WarningList } from "../../wire/shared/narrow.js";
import { isReasoningEffort } from "../../wire/shared/reasoning.js";
import type { ConverseContentBlock, ConverseImageFormat, ConverseMessage, ConverseRequest, ConverseToolChoice, ConverseToolSpec } from "./types.js";

export interface ChatToConverseOptions {
  /** maxTokens when the client sent neither max_tokens nor max_completion_tokens (bounds the cost). */
  defaultMaxTokens: number;
  /** The model's output limit, if configured: a limit raised to make room for thinking stays within it. */
  maxOutputTokens?: number | null;
  /** The Bedrock model id (or inference profile, or ARN) the request goes to: it tells whether the model is Claude. */
  upstreamModel?: string;
}

/**
 * A Claude model on Bedrock: its id names the anthropic provider, alone ("anthropic.claude-..."),
 * behind a cross-region prefix ("us.anthropic...", "global.anthropic...") or at the end of an ARN.
 * An application inference profile's ARN names no model and is not recognised.
 */
export function isAnthropicBedrockModel(upstreamModel: string | undefined): boolean {
  return upstreamModel !== undefined && /(^|[./])anthropic\./.test(upstreamModel);
}

/** Bedrock takes no field beyond the common ones (chat-request.ts). */
const HANDLED_FIELDS = handledFields([]);

const IMAGE_FORMATS: Record<string, ConverseImageFormat> = { "image/png": "png", "image/jpeg": "jpeg", "image/jpg": "jpeg", "image/gif": "gif", "image/webp": "webp" };

export function convertChatRequestToConverse(body: unknown, options: ChatToConverseOptions): { request: ConverseRequest; warnings: string[] } {
  if (!isRecord(body)) throw invalidRequest("body", "The request body must be a JSON object.");
  const warnings = new WarningList();
  if (!Array.isArray(body.messages)) throw invalidRequest("messages", "messages must be an array.");
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw invalidRequest("n", "n must be 1 for this model: the upstream returns a single choice.");
  const { system, turns } = convertChatMessagesToTurns(body.messages, warnings);
  const request: ConverseRequest = { messages: [] };
  // Converse has its own cache points; Chat's cache_control markers are not translated to them.
  if (system !== undefined) request.system = [{ text: typeof system === "string" ? system : system.map((block) => block.text).join("\n\n") }];
  const clientLimit = readOutputLimit(body);
  request.inferenceConfig = { maxTokens: clientLimit ?? options.defaultMaxTokens };
  const temperature = readUnitTemperature(body.temperature, "Converse", warnings);
  if (temperature !== undefined) request.inferenceConfig.temperature = temperature;
  if (isNumber(body.top_p)) request.inferenceConfig.topP = body.top_p;
  const stop = readStopSequences(body.stop);
  if (stop !== undefined) request.inferenceConfig.stopSequences = stop;
  applyTools(body, request, warnings);
  const thinking = applyConverseThinking(body.reasoning_effort, turns, request, clientLimit === undefined ? options : undefined, options.upstreamModel, warnings);
  request.messages = thinking.turns.map((turn, i) => converseMessage(turn, `messages[${i}]`, thinking.enabled));
  warnDroppedFields(body, HANDLED_FIELDS, "Bedrock Converse", warnings);
  return { request, warnings: warnings.toArray() };
}

/**
 * reasoning_effort -> additionalModelRequestFields.thinking for a Claude model, by Anthropic's rules
 * (budget table, room in maxTokens, no forced tool, signed thinking in a tool loop, temperature and
 * top_p): Bedrock passes the object to the model as it is. Other Bedrock models take no effort: the
 * field is dropped with a warning. Returns the turns to send (thinking blocks only with thinking on).
 */
function applyConverseThinking(
  effort: unknown,
  turns: AnthropicMessageParam[],
  request: ConverseRequest,
  defaults: ChatToConverseOptions | undefined,
  upstreamModel: string | undefined,
  warnings: WarningList,
): { turns: AnthropicMessageParam[]; enabled: boolean } {
  if (effort !== undefined && effort !== null && !isReasoningEffort(effort)) {
    throw invalidRequest("reasoning_effort", "reasoning_effort must be one of none, minimal, low, medium, high, xhigh, max.");
  }
  if (!isAnthropicBedrockModel(upstreamModel)) {
    if (effort !== undefined && effort !== null && effort !== "none") warnings.add("reasoning_effort: dropped (thinking is sent to Claude models on Bedrock only)");
    return { turns, enabled: false };
  }
  const inference = request.inferenceConfig ?? {};
  const choice = request.toolConfig?.toolChoice;
  const shaped: AnthropicMessagesRequest = { model: upstreamModel ?? "", max_tokens: inference.maxTokens ?? 1, messages: turns };
  if (inference.temperature !== undefined) shaped.temperature = inference.temperature;
  if (inference.topP !== undefined) shaped.top_p = inference.topP;
  if (choice !== undefined && "any" in choice) shaped.tool_choice = { type: "any" };
  else if (choice !== undefined && "tool" in choice) shaped.tool_choice = { type: "tool", name: choice.tool.name };
  applyThinking(effort, shaped, defaults, warnings);
  const thinking = shaped.thinking as { type: "enabled"; budget_tokens: number } | undefined;
  if (thinking === undefined) return { turns: shaped.messages, enabled: false };
  request.additionalModelRequestFields = { thinking };
  request.inferenceConfig = { ...inference, maxTokens: shaped.max_tokens };
  if (shaped.temperature === undefined) delete request.inferenceConfig.temperature;
  if (shaped.top_p === undefined) delete request.inferenceConfig.topP;
  return { turns: shaped.messages, enabled: true };
}

function converseMessage(turn: AnthropicMessageParam, path: string, withThinking: boolean): ConverseMessage {
  const blocks = typeof turn.content === "string" ? [{ type: "text" as const, text: turn.content }] : turn.content;
  return { role: turn.role === "assistant" ? "assistant" : "user", content: blocks.flatMap((block) => converseBlocks(block, path, withThinking)) };
}

function converseBlocks(block: AnthropicContentBlockParam, path: string, withThinking: boolean): ConverseContentBlock[] {
  switch (block.type) {
    case "text":
      return [{ text: block.text }];
    case "image": {
      if (block.source.type !== "base64") throw invalidRequest(`${path}.content`, "Images for this model must be base64 data URLs: the upstream takes image bytes, not URLs.");
      const format = IMAGE_FORMATS[block.source.media_type.toLowerCase()];
      if (format === undefined) throw invalidRequest(`${path}.content`, "Images for this model must be PNG, JPEG, GIF or WebP.");
      return [{ image: { format, source: { bytes: block.source.data } } }];
    }
    case "document":
      return [{ document: { format: "pdf", name: documentName(block.title), source: { bytes: block.source.data ?? "" } } }];
    case "tool_use":
      return [{ toolUse: { toolUseId: block.id, name: block.name, input: block.input } }];
    case "tool_result":
      return [{ toolResult: { toolUseId: block.tool_use_id, content: [{ text: typeof block.content === "string" ? block.content : "" }] } }];
    case "thinking":
      // Signed thinking goes back verbatim: Claude checks it in a continued tool loop.
      return withThinking ? [{ reasoningContent: { reasoningText: { text: block.thinking, signature: block.signature } } }] : [];
    case "redacted_thinking":
      return withThinking ? [{ reasoningContent: { redactedContent: block.data } }] : [];
    default:
      return [];
  }
}

/** Converse document names allow letters, digits, single spaces, hyphens, parentheses and brackets. */
function documentName(title: string | null | undefined): string {
  const name = (title ?? "")
    .replace(/\.[A-Za-z0-9]+$/, "")
    .replace(/[^A-Za-z0-9()[\]-]+/g, " ")
    .trim();
  return name === "" ? "document" : name.slice(0, 200);
}

function applyTools(body: Record<string, unknown>, request: ConverseRequest, warnings: WarningList): void {
  const tools = readChatFunctionTools(body, warnings).map(({ name, description, parameters }): ConverseToolSpec => ({
    toolSpec: { name, inputSchema: { json: objectSchema(parameters) }, ...(description !== undefined ? { description } : {}) },
  }));
  if (tools.length === 0) return;
  request.toolConfig = { tools };
  const choice = convertToolChoice(body.tool_choice, warnings);
  if (choice !== undefined) request.toolConfig.toolChoice = choice;
}

function convertToolChoice(choice: unknown, warnings: WarningList): ConverseToolChoice | undefined {
  if (choice === undefined || choice === null || choice === "auto") return choice === "auto" ? { auto: {} } : undefined;
  if (choice === "required") return { any: {} };
  if (choice === "none") {
    warnings.add("tool_choice none: sent as auto (Converse has no none)");
    return { auto: {} };
  }
  if (isRecord(choice) && choice.type === "function") {
    const fn = choice.function;
    if (!isRecord(fn) || !isString(fn.name)) throw invalidRequest("tool_choice.function.name", "tool_choice.function.name is required.");
    return { tool: { name: fn.name } };
  }
  if (isRecord(choice) && choice.type === "allowed_tools") {
    warnings.add("tool_choice allowed_tools: sent as auto/any over all tools (Converse has no allow-list)");
    const allowed = choice.allowed_tools;
    return isRecord(allowed) && allowed.mode === "required" ? { any: {} } : { auto: {} };
  }
  throw invalidRequest("tool_choice", "tool_choice must be none, auto, required or a function choice.");
}
