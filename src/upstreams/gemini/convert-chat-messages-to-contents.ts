// Chat `messages` -> Gemini `systemInstruction` + `contents`. System and developer messages become
// the system instruction; user messages user contents; assistant messages model contents (text and
// functionCall parts); tool messages functionResponse parts in a user content. Gemini has no call
// ids: a tool message is matched to its call by tool_call_id among the earlier assistant tool_calls,
// and sent under that call's function name. Consecutive contents of one role are merged, so the
// answers to parallel calls travel together as Gemini expects.
import { invalidRequest } from "../../errors/catalogue.js";
import { textOf } from "../../wire/shared/chat-content.js";
import { forEachChatMessage, forEachToolCall, forEachUserPart, imageUrlOf, readDataUrl } from "../../wire/shared/chat-messages.js";
import { isRecord, isString, parseJsonObject, type JsonObject, type WarningList } from "../../wire/shared/narrow.js";
import type { GeminiContent, GeminiPart } from "../../wire/gemini/types.js";

/**
 * Gemini 3 refuses a replayed functionCall part without its thought signature, which a Chat history
 * cannot carry; Google documents this value for histories built elsewhere (thought-signatures docs).
 */
export const SKIPPED_THOUGHT_SIGNATURE = "skip_thought_signature_validator";

export function convertChatMessagesToContents(messages: readonly unknown[], warnings: WarningList): { systemText: string | undefined; contents: GeminiContent[] } {
  const systemParts: string[] = [];
  const contents: GeminiContent[] = [];
  const callNames = new Map<string, string>();
  forEachChatMessage(messages, (message, role, path) => {
    switch (role) {
      case "system":
      case "developer": {
        if (contents.length > 0) warnings.add("system messages after the first turn: moved into the system instruction");
        const text = textOf(message.content, `${path}.content`);
        if (text !== "") systemParts.push(text);
        return;
      }
      case "user":
        push(contents, "user", userParts(message.content, `${path}.content`, warnings));
        return;
      case "assistant":
        push(contents, "model", modelParts(message, path, callNames));
        return;
      case "tool": {
        if (!isString(message.tool_call_id)) throw invalidRequest(`${path}.tool_call_id`, `${path}.tool_call_id is required.`);
        const name = callNames.get(message.tool_call_id);
        if (name === undefined) {
          throw invalidRequest(`${path}.tool_call_id`, `${path}.tool_call_id does not match a tool call of an earlier assistant message.`);
        }
        const text = textOf(message.content, `${path}.content`);
        push(contents, "user", [{ functionResponse: { name, response: functionResponseOf(text) } }]);
        return;
      }
    }
  });
  return { systemText: systemParts.length > 0 ? systemParts.join("\n\n") : undefined, contents };
}

/** A JSON object result is sent as is; anything else as {"output": text} (Gemini wants an object). */
function functionResponseOf(text: string): JsonObject {
  const parsed = parseJsonObject(text);
  return parsed.ok && text.trim() !== "" ? parsed.value : { output: text };
}

function push(contents: GeminiContent[], role: GeminiContent["role"], parts: GeminiPart[]): void {
  if (parts.length === 0) return;
  const last = contents[contents.length - 1];
  if (last !== undefined && last.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

function userParts(content: unknown, path: string, warnings: WarningList): GeminiPart[] {
  if (isString(content)) return nonEmptyText(content);
  const parts: GeminiPart[] = [];
  forEachUserPart(content, path, {
    text: (text) => parts.push(...nonEmptyText(text)),
    other(part, at) {
      switch (part.type) {
        case "image_url":
          parts.push(imagePart(part, at));
          return;
        case "input_audio": {
          const audio = isRecord(part.input_audio) ? part.input_audio : {};
          if (!isString(audio.data) || !isString(audio.format)) throw invalidRequest(`${at}.input_audio`, `${at}.input_audio needs data and format.`);
          parts.push({ inlineData: { mimeType: `audio/${audio.format}`, data: audio.data } });
          return;
        }
        case "file": {
          const file = isRecord(part.file) ? part.file : {};
          const data = isString(file.file_data) ? readDataUrl(file.file_data) : null;
          if (data === null) throw invalidRequest(`${at}.file.file_data`, `${at}.file.file_data must be a base64 data URL for this model (file ids are not supported).`);
          parts.push({ inlineData: { mimeType: data.mediaType, data: data.data } });
          return;
        }
        default:
          warnings.add(`${at}: content part type ${String(part.type)} dropped (no Gemini equivalent)`);
      }
    },
  });
  return parts;
}

function modelParts(message: JsonObject, path: string, callNames: Map<string, string>): GeminiPart[] {
  const parts: GeminiPart[] = [...nonEmptyText(textOf(message.content, `${path}.content`))];
  if (isString(message.refusal) && message.refusal !== "") parts.push({ text: message.refusal });
  forEachToolCall(message, path, (call, at, k) => {
    const args = parseJsonObject(call.arguments);
    if (!args.ok) throw invalidRequest(`${at}.function.arguments`, `${at}.function.arguments must be a JSON object.`);
    callNames.set(call.id, call.name);
    const part: GeminiPart = { functionCall: { name: call.name, args: args.value } };
    // The first call of a turn carries the signature (as Gemini itself sends parallel calls).
    if (k === 0) part.thoughtSignature = SKIPPED_THOUGHT_SIGNATURE;
    parts.push(part);
  });
  return parts;
}

/** Gemini rejects empty text parts. */
function nonEmptyText(text: string): GeminiPart[] {
  return text === "" ? [] : [{ text }];
}

function imagePart(part: JsonObject, path: string): GeminiPart {
  const data = readDataUrl(imageUrlOf(part, path));
  if (data !== null) return { inlineData: { mimeType: data.mediaType, data: data.data } };
  // Gemini fetches fileData URIs of its Files API only; an arbitrary web URL would be refused upstream.
  throw invalidRequest(`${path}.image_url.url`, `${path}.image_url.url must be a base64 data URL for this model (http image URLs are not supported).`);
}
