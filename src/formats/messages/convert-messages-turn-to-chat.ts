// One Anthropic `messages[i]` turn -> Chat messages. A user turn may become several: its tool_result
// blocks become `tool` messages first (Chat wants answers right after the assistant's tool_calls),
// then the rest of the turn as one user message.
import { invalidRequest } from "../../errors/catalogue.js";
import type { ChatAssistantMessage, ChatCacheControl, ChatMessage, ChatTextPart, ChatToolCall, ChatToolMessage, ChatUserContentPart } from "../../wire/chat/types.js";
import { isRecord, isString, type JsonObject, type WarningList } from "../../wire/shared/narrow.js";
import { readCacheControl } from "../../wire/messages/cache-breakpoints.js";

/** How a turn is translated: whether cache_control markers ride on the Chat parts (prompt_caching: forward). */
export interface TurnOptions {
  systemRole: "system" | "developer";
  keepCacheControl: boolean;
}

/** Block types we know and deliberately drop: they have no Chat Completions equivalent. */
const DROPPED_BLOCK_TYPES = new Set([
  "thinking",
  "redacted_thinking",
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "mcp_tool_use",
  "mcp_tool_result",
  "container_upload",
  "search_result",
]);

export function convertMessagesTurnToChat(turn: unknown, path: string, options: TurnOptions, warnings: WarningList): ChatMessage[] {
  if (!isRecord(turn)) throw invalidRequest(path, `${path} must be an object.`);
  const content = turn.content;
  if (!isString(content) && !Array.isArray(content)) {
    throw invalidRequest(`${path}.content`, `${path}.content must be a string or an array of content blocks.`);
  }
  const blocks: JsonObject[] = isString(content) ? [{ type: "text", text: content }] : content.map((b, j) => requireBlock(b, `${path}.content[${j}]`, options, warnings));
  switch (turn.role) {
    case "system":
      return [{ role: options.systemRole, content: joinSystemText(blocks, `${path}.content`) }];
    case "user":
      return convertUserTurn(blocks, `${path}.content`, options, warnings);
    case "assistant":
      return [convertAssistantTurn(blocks, `${path}.content`, options, warnings)];
    default:
      throw invalidRequest(`${path}.role`, `${path}.role must be "user", "assistant" or "system".`);
  }
}

/** Joins text blocks of a system prompt; Chat system messages carry text only. */
export function joinSystemText(blocks: readonly unknown[], path: string): string {
  return blocks
    .map((block, j) => {
      if (!isRecord(block) || block.type !== "text" || !isString(block.text)) {
        throw invalidRequest(`${path}[${j}].type`, `${path}[${j}] must be a text block.`);
      }
      return block.text;
    })
    .join("\n");
}

function requireBlock(block: unknown, path: string, options: TurnOptions, warnings: WarningList): JsonObject {
  if (!isRecord(block) || !isString(block.type)) throw invalidRequest(`${path}.type`, `${path} must be a content block with a type.`);
  // Prompt caching is automatic (or absent) on most Chat upstreams: the marker goes only where forwarding is configured.
  if (block.cache_control !== undefined && !options.keepCacheControl) warnings.add("cache_control: dropped (no Chat Completions equivalent)");
  return block;
}

/** A block's marker, when markers are forwarded. */
function markerOf(block: JsonObject, path: string, options: TurnOptions): { cache_control?: ChatCacheControl } {
  if (!options.keepCacheControl) return {};
  const marker = readCacheControl(block.cache_control, `${path}.cache_control`);
  return marker === undefined ? {} : { cache_control: marker };
}

function convertUserTurn(blocks: JsonObject[], path: string, options: TurnOptions, warnings: WarningList): ChatMessage[] {
  const toolMessages: ChatToolMessage[] = [];
  const toolImages: ChatUserContentPart[] = [];
  const parts: ChatUserContentPart[] = [];
  blocks.forEach((block, j) => {
    const at = `${path}[${j}]`;
    switch (block.type) {
      case "tool_result": {
        const result = convertToolResult(block, at, options, warnings);
        toolMessages.push(result.message);
        toolImages.push(...result.images);
        return;
      }
      case "text":
        parts.push({ type: "text", text: requireString(block.text, `${at}.text`), ...markerOf(block, at, options) });
        return;
      case "image":
        parts.push({ ...convertImage(block, at), ...markerOf(block, at, options) });
        return;
      case "document":
        parts.push(...convertDocument(block, at, warnings).map((part) => ({ ...part, ...markerOf(block, at, options) })));
        return;
      default:
        dropOrReject(block, at, warnings);
    }
  });
  const messages: ChatMessage[] = [...toolMessages];
  // Chat tool messages are text-only, so images from tool results ride in a user message right after them.
  const userParts = [...toolImages, ...parts];
  if (userParts.length === 1 && userParts[0]?.type === "text" && !("cache_control" in userParts[0])) messages.push({ role: "user", content: userParts[0].text });
  else if (userParts.length > 0) messages.push({ role: "user", content: userParts });
  return messages;
}

function convertAssistantTurn(blocks: JsonObject[], path: string, options: TurnOptions, warnings: WarningList): ChatAssistantMessage {
  const texts: string[] = [];
  const textParts: ChatTextPart[] = [];
  const toolCalls: ChatToolCall[] = [];
  blocks.forEach((block, j) => {
    const at = `${path}[${j}]`;
    switch (block.type) {
      case "text":
        texts.push(requireString(block.text, `${at}.text`));
        textParts.push({ type: "text", text: texts.at(-1)!, ...markerOf(block, at, options) });
        return;
      case "tool_use":
        toolCalls.push({
          id: requireString(block.id, `${at}.id`),
          type: "function",
          function: { name: requireString(block.name, `${at}.name`), arguments: JSON.stringify(block.input ?? {}) },
        });
        return;
      default:
        dropOrReject(block, at, warnings);
    }
  });
  const marked = textParts.some((part) => part.cache_control !== undefined);
  const message: ChatAssistantMessage = { role: "assistant", content: marked ? textParts : texts.length > 0 ? texts.join("\n") : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  else if (message.content === null) message.content = "";
  return message;
}

function convertToolResult(block: JsonObject, path: string, options: TurnOptions, warnings: WarningList): { message: ChatToolMessage; images: ChatUserContentPart[] } {
  const toolCallId = requireString(block.tool_use_id, `${path}.tool_use_id`);
  const texts: string[] = [];
  const images: ChatUserContentPart[] = [];
  const content = block.content;
  if (isString(content)) texts.push(content);
  else if (Array.isArray(content)) {
    content.forEach((inner, k) => {
      const at = `${path}.content[${k}]`;
      const part = requireBlock(inner, at, options, warnings);
      if (part.type === "text") texts.push(requireString(part.text, `${at}.text`));
      else if (part.type === "image") {
        images.push(convertImage(part, at));
        warnings.add("tool_result images: moved to a user message after the tool messages (Chat tool messages are text-only)");
      } else warnings.add(`tool_result ${String(part.type)} blocks: dropped (no Chat equivalent)`);
    });
  } else if (content !== undefined && content !== null) {
    throw invalidRequest(`${path}.content`, `${path}.content must be a string or an array of blocks.`);
  }
  let text = texts.join("\n");
  // Chat has no error flag on tool messages; say it in the text so the model still sees it.
  if (block.is_error === true) text = text === "" ? "Error" : `Error: ${text}`;
  const marker = markerOf(block, path, options);
  const toolContent = marker.cache_control === undefined ? text : [{ type: "text" as const, text, ...marker }];
  return { message: { role: "tool", tool_call_id: toolCallId, content: toolContent }, images };
}

function convertImage(block: JsonObject, path: string): ChatUserContentPart {
  const source = block.source;
  if (!isRecord(source)) throw invalidRequest(`${path}.source`, `${path}.source must be an object.`);
  switch (source.type) {
    case "base64": {
      const mediaType = requireString(source.media_type, `${path}.source.media_type`);
      const data = requireString(source.data, `${path}.source.data`);
      return { type: "image_url", image_url: { url: `data:${mediaType};base64,${data}` } };
    }
    case "url":
      return { type: "image_url", image_url: { url: requireString(source.url, `${path}.source.url`) } };
    default:
      throw invalidRequest(`${path}.source.type`, `Image source type ${JSON.stringify(source.type)} is not supported here; use base64 or url.`);
  }
}

function convertDocument(block: JsonObject, path: string, warnings: WarningList): ChatUserContentPart[] {
  const source = block.source;
  if (!isRecord(source)) throw invalidRequest(`${path}.source`, `${path}.source must be an object.`);
  if (source.type === "text" && isString(source.data)) return [{ type: "text", text: source.data }];
  if (source.type === "base64" && isString(source.data)) {
    const mediaType = isString(source.media_type) ? source.media_type : "application/pdf";
    const filename = isString(block.title) ? block.title : "document.pdf";
    return [{ type: "file", file: { file_data: `data:${mediaType};base64,${source.data}`, filename } }];
  }
  warnings.add(`document blocks with source type ${JSON.stringify(source.type)}: dropped (no Chat equivalent)`);
  return [];
}

function dropOrReject(block: JsonObject, path: string, warnings: WarningList): void {
  const type = String(block.type);
  if (DROPPED_BLOCK_TYPES.has(type)) {
    warnings.add(`${type} blocks: dropped (no Chat Completions equivalent)`);
    return;
  }
  throw invalidRequest(`${path}.type`, `Content block type ${JSON.stringify(type)} is not supported in this position.`);
}

function requireString(value: unknown, path: string): string {
  if (!isString(value)) throw invalidRequest(path, `${path} must be a string.`);
  return value;
}
