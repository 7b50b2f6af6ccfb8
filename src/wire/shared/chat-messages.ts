// Walking a Chat request's messages for a translation out of Chat (Anthropic, Bedrock, Gemini): each
// message with a known role, a user message's parts, an assistant's tool calls, image and file data
// URLs. The checks and their errors are the same for every target; what becomes of each is not.
import { invalidRequest } from "../../errors/catalogue.js";
import { isRecord, isString, type JsonObject } from "./narrow.js";

export type ChatRole = "system" | "developer" | "user" | "assistant" | "tool";

const CHAT_ROLES: ReadonlySet<unknown> = new Set<ChatRole>(["system", "developer", "user", "assistant", "tool"]);

function isChatRole(role: unknown): role is ChatRole {
  return CHAT_ROLES.has(role);
}

/** Visits each message, in order, once it is known to be an object with a Chat role; `path` is "messages[i]". */
export function forEachChatMessage(messages: readonly unknown[], visit: (message: JsonObject, role: ChatRole, path: string) => void): void {
  messages.forEach((message, i) => {
    const path = `messages[${i}]`;
    if (!isRecord(message)) throw invalidRequest(path, `${path} must be an object.`);
    const role = message.role;
    if (!isChatRole(role)) throw invalidRequest(`${path}.role`, `${path}.role must be one of system, developer, user, assistant, tool.`);
    visit(message, role, path);
  });
}

export interface UserPartVisitor {
  /** A text part, its text checked to be a string. */
  text(text: string, part: JsonObject, at: string): void;
  /** Any other part. */
  other(part: JsonObject, at: string): void;
}

/** Visits each part of a user message's content array, in order, once it is known to be an object; string content is the caller's. */
export function forEachUserPart(content: unknown, path: string, visitor: UserPartVisitor): void {
  if (!Array.isArray(content)) throw invalidRequest(path, `${path} must be a string or an array of parts.`);
  content.forEach((part: unknown, j) => {
    const at = `${path}[${j}]`;
    if (!isRecord(part)) throw invalidRequest(at, `${at} must be an object.`);
    if (part.type !== "text") return visitor.other(part, at);
    if (!isString(part.text)) throw invalidRequest(`${at}.text`, `${at}.text must be a string.`);
    visitor.text(part.text, part, at);
  });
}

export interface ChatToolCall {
  id: string;
  name: string;
  /** The arguments' JSON text as sent; "" when absent. */
  arguments: string;
}

/** Visits each of an assistant message's tool calls, in order, once it has an id and a function name. */
export function forEachToolCall(message: JsonObject, path: string, visit: (call: ChatToolCall, at: string, k: number) => void): void {
  const calls = message.tool_calls;
  if (calls !== undefined && calls !== null && !Array.isArray(calls)) throw invalidRequest(`${path}.tool_calls`, `${path}.tool_calls must be an array.`);
  (calls ?? []).forEach((call: unknown, k: number) => {
    const at = `${path}.tool_calls[${k}]`;
    if (!isRecord(call) || !isString(call.id)) throw invalidRequest(`${at}.id`, `${at}.id is required.`);
    const fn = call.function;
    if (!isRecord(fn) || !isString(fn.name)) throw invalidRequest(`${at}.function.name`, `${at}.function.name is required.`);
    visit({ id: call.id, name: fn.name, arguments: isString(fn.arguments) ? fn.arguments : "" }, at, k);
  });
}

/** An image_url part's URL: the object form's url, or the string itself. */
export function imageUrlOf(part: JsonObject, path: string): string {
  const image = part.image_url;
  const url = isRecord(image) ? image.url : image;
  if (!isString(url)) throw invalidRequest(`${path}.image_url.url`, `${path}.image_url.url must be a string.`);
  return url;
}

const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;

/** A base64 data URL's media type and data; null for anything else. */
export function readDataUrl(url: string): { mediaType: string; data: string } | null {
  const match = DATA_URL.exec(url);
  return match === null ? null : { mediaType: match[1] ?? "", data: match[2] ?? "" };
}
