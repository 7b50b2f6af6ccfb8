// Chat `messages` -> Anthropic `system` + alternating turns. Tool messages become tool_result blocks in a
// user turn; consecutive same-role turns are merged because Anthropic requires alternation, with
// tool_result blocks first in a user turn as the API requires. cache_control markers on parts and
// messages, and an assistant's thinking_blocks, are carried onto the blocks they belong to.
import { invalidRequest } from "../../errors/catalogue.js";
import type { ChatCacheControl } from "../../wire/chat/types.js";
import { textOf } from "../../wire/shared/chat-content.js";
import { forEachChatMessage, forEachToolCall, forEachUserPart, imageUrlOf, readDataUrl } from "../../wire/shared/chat-messages.js";
import { isRecord, isString, parseJsonObject, type JsonObject, type WarningList } from "../../wire/shared/narrow.js";
import { readThinkingBlocks } from "../../wire/shared/reasoning.js";
import { readCacheControl } from "../../wire/messages/cache-breakpoints.js";
import type { AnthropicContentBlockParam, AnthropicImageBlockParam, AnthropicMessageParam, AnthropicTextBlockParam } from "../../wire/messages/types.js";

export interface ChatTurns {
  /** A string, or text blocks when a client marked part of it with cache_control. */
  system: string | AnthropicTextBlockParam[] | undefined;
  turns: AnthropicMessageParam[];
}

export function convertChatMessagesToTurns(messages: readonly unknown[], warnings: WarningList): ChatTurns {
  const systemBlocks: AnthropicTextBlockParam[] = [];
  const turns: AnthropicMessageParam[] = [];
  forEachChatMessage(messages, (message, role, path) => {
    switch (role) {
      case "system":
      case "developer": {
        // Anthropic has one top-level system prompt; later system messages are folded into it.
        if (turns.length > 0) warnings.add("system messages after the first turn: moved into the top-level system prompt");
        systemBlocks.push(...withMessageMarker(systemTextBlocks(message.content, `${path}.content`), message, path));
        return;
      }
      case "user":
        pushTurn(turns, "user", withMessageMarker(userBlocks(message.content, `${path}.content`, warnings), message, path));
        return;
      case "assistant":
        pushTurn(turns, "assistant", withMessageMarker(assistantBlocks(message, path, warnings), message, path));
        return;
      case "tool": {
        if (!isString(message.tool_call_id)) throw invalidRequest(`${path}.tool_call_id`, `${path}.tool_call_id is required.`);
        const content = textOf(message.content, `${path}.content`);
        const marker = partMarkers(message.content, `${path}.content`).at(-1) ?? readCacheControl(message.cache_control, `${path}.cache_control`);
        pushTurn(turns, "user", [{ type: "tool_result", tool_use_id: message.tool_call_id, content, ...(marker ? { cache_control: marker } : {}) }]);
        return;
      }
    }
  });
  return { system: systemOf(systemBlocks), turns };
}

/** Plain text as before unless a block carries a marker: then the blocks, so the marker keeps its place. */
function systemOf(blocks: AnthropicTextBlockParam[]): string | AnthropicTextBlockParam[] | undefined {
  if (blocks.length === 0) return undefined;
  if (blocks.some((block) => block.cache_control !== undefined)) return blocks;
  return blocks.map((block) => block.text).join("\n\n");
}

/** One text block per system message, or one per part when a part carries a marker. */
function systemTextBlocks(content: unknown, path: string): AnthropicTextBlockParam[] {
  const markers = partMarkers(content, path);
  if (markers.length === 0 || !Array.isArray(content)) return nonEmptyText(textOf(content, path));
  return content.flatMap((part: unknown, j: number) => {
    const at = `${path}[${j}]`;
    const blocks = nonEmptyText(textOf([part], at));
    const marker = isRecord(part) ? readCacheControl(part.cache_control, `${at}.cache_control`) : undefined;
    return marker && blocks[0] ? [{ ...blocks[0], cache_control: marker }] : blocks;
  });
}

/** The markers on a message's parts (validated), in order. */
function partMarkers(content: unknown, path: string): ChatCacheControl[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((part: unknown, j: number) => {
    const marker = isRecord(part) ? readCacheControl(part.cache_control, `${path}[${j}].cache_control`) : undefined;
    return marker ? [marker] : [];
  });
}

/** A message-level cache_control (string content has no parts to carry it) marks the message's last block. */
function withMessageMarker<T extends AnthropicContentBlockParam>(blocks: T[], message: JsonObject, path: string): T[] {
  const marker = readCacheControl(message.cache_control, `${path}.cache_control`);
  const last = blocks.at(-1);
  if (marker === undefined || last === undefined || last.type === "thinking" || last.type === "redacted_thinking") return blocks;
  (last as { cache_control?: unknown }).cache_control = marker;
  return blocks;
}

function pushTurn(turns: AnthropicMessageParam[], role: "user" | "assistant", blocks: AnthropicContentBlockParam[]): void {
  if (blocks.length === 0) return;
  const last = turns[turns.length - 1];
  if (last !== undefined && last.role === role && Array.isArray(last.content)) {
    last.content.push(...blocks);
    if (role === "user") last.content.sort((a, b) => rank(a) - rank(b));
    return;
  }
  turns.push({ role, content: role === "user" ? [...blocks].sort((a, b) => rank(a) - rank(b)) : blocks });
}

/** tool_result blocks first, everything else after, each group in its original order (sort is stable). */
function rank(block: AnthropicContentBlockParam): number {
  return block.type === "tool_result" ? 0 : 1;
}

function userBlocks(content: unknown, path: string, warnings: WarningList): AnthropicContentBlockParam[] {
  if (isString(content)) return nonEmptyText(content);
  const blocks: AnthropicContentBlockParam[] = [];
  forEachUserPart(content, path, {
    text: (text, part, at) => blocks.push(...marked(nonEmptyText(text), part, at)),
    other(part, at) {
      switch (part.type) {
        case "image_url":
          blocks.push(...marked([imageBlock(part, at)], part, at));
          return;
        case "file":
          blocks.push(...marked(fileBlocks(part, at, warnings), part, at));
          return;
        case "input_audio":
          warnings.add("input_audio parts: dropped (Anthropic has no audio input)");
          return;
        default:
          throw invalidRequest(`${at}.type`, `Content part type ${JSON.stringify(part.type)} is not supported.`);
      }
    },
  });
  return blocks;
}

function marked(blocks: AnthropicContentBlockParam[], part: JsonObject, path: string): AnthropicContentBlockParam[] {
  const marker = readCacheControl(part.cache_control, `${path}.cache_control`);
  if (marker !== undefined && blocks.length > 0) (blocks[blocks.length - 1] as { cache_control?: unknown }).cache_control = marker;
  return blocks;
}

function assistantBlocks(message: JsonObject, path: string, warnings: WarningList): AnthropicContentBlockParam[] {
  // Signed thinking goes first, verbatim: Anthropic checks it in a continued tool loop.
  const blocks: AnthropicContentBlockParam[] = [...readThinkingBlocks(message.thinking_blocks, `${path}.thinking_blocks`)];
  const textBlocks = nonEmptyText(textOf(message.content, `${path}.content`));
  const textMarker = partMarkers(message.content, `${path}.content`).at(-1);
  if (textMarker !== undefined && textBlocks[0] !== undefined) textBlocks[0].cache_control = textMarker;
  if (blocks.length === 0 && isString(message.reasoning_content) && message.reasoning_content !== "") {
    warnings.add(`${path}.reasoning_content: not sent without its thinking_blocks (Anthropic takes signed thinking only)`);
  }
  blocks.push(...textBlocks);
  if (isString(message.refusal) && message.refusal !== "") blocks.push({ type: "text", text: message.refusal });
  forEachToolCall(message, path, (call, at) => {
    const parsed = parseJsonObject(call.arguments);
    // Anthropic needs an object input; a history entry with broken JSON is sent as {} rather than failing the turn.
    if (!parsed.ok) warnings.add(`${at}.function.arguments: not a JSON object, sent as {}`);
    blocks.push({ type: "tool_use", id: call.id, name: call.name, input: parsed.value });
  });
  return blocks;
}

/** Anthropic rejects empty text blocks, so empty strings produce no block. */
function nonEmptyText(text: string): AnthropicTextBlockParam[] {
  return text === "" ? [] : [{ type: "text", text }];
}

function imageBlock(part: JsonObject, path: string): AnthropicImageBlockParam {
  const url = imageUrlOf(part, path);
  const data = readDataUrl(url);
  if (data !== null) return { type: "image", source: { type: "base64", media_type: data.mediaType, data: data.data } };
  if (/^https?:\/\//i.test(url)) return { type: "image", source: { type: "url", url } };
  throw invalidRequest(`${path}.image_url.url`, "Image URLs must be http(s) or base64 data URLs.");
}

function fileBlocks(part: JsonObject, path: string, warnings: WarningList): AnthropicContentBlockParam[] {
  const file = isRecord(part.file) ? part.file : {};
  const data = isString(file.file_data) ? readDataUrl(file.file_data) : null;
  if (data !== null && data.mediaType === "application/pdf") {
    const block: AnthropicContentBlockParam = { type: "document", source: { type: "base64", media_type: "application/pdf", data: data.data } };
    if (isString(file.filename)) block.title = file.filename;
    return [block];
  }
  warnings.add(`${path}: file parts other than base64 PDF data dropped (no Anthropic equivalent here)`);
  return [];
}
