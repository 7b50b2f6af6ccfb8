// Gemini `systemInstruction` + `contents` -> Chat messages, for Gemini clients (the @google/genai SDK,
// Gemini CLI) on Chat upstreams. User contents become user messages (text, inline images, audio and
// documents as Chat parts), model contents assistant messages (text and tool_calls), and
// functionResponse parts tool messages, each answering the call it names. Gemini calls often have no
// id: a call without one gets a positional id, and a response without one answers the earliest
// unanswered call of its name. Thought parts and thought signatures are documented as ignored here
// (a Chat upstream has no use for them; a Gemini-native upstream receives them untouched).
import { invalidRequest } from "../../errors/catalogue.js";
import type { ChatAssistantMessage, ChatMessage, ChatToolCall, ChatUserContentPart } from "../../wire/chat/types.js";
import { isRecord, isString, type JsonObject } from "../../wire/shared/narrow.js";

/** Part fields the bridge translates or ignores (documented); any other field is refused by name. */
const PART_FIELDS = new Set(["text", "thought", "thoughtSignature", "inlineData", "functionCall", "functionResponse"]);
const AUDIO_FORMATS: Readonly<Record<string, "wav" | "mp3">> = { "audio/wav": "wav", "audio/x-wav": "wav", "audio/mp3": "mp3", "audio/mpeg": "mp3" };

export interface ContentsOptions {
  /** The model takes image input (its `modalities.input`); else an image part is refused. */
  imageInput: boolean;
}

/** The system instruction's text: a Content of text parts (its role is ignored), or a plain string. */
export function systemInstructionText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (isString(value)) return value === "" ? undefined : value;
  if (!isRecord(value) || !Array.isArray(value.parts)) throw invalidRequest("systemInstruction.parts", "systemInstruction must be a Content with parts.");
  const texts = value.parts.map((part: unknown, i: number) => {
    const at = `systemInstruction.parts[${i}]`;
    if (!isRecord(part) || !isString(part.text)) throw invalidRequest(at, `${at} must be a text part: the system instruction takes text only.`);
    return part.text;
  });
  const text = texts.join("\n");
  return text === "" ? undefined : text;
}

interface PendingCall {
  id: string;
  name: string;
  answered: boolean;
}

export function convertGeminiContentsToChat(contents: readonly unknown[], options: ContentsOptions): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let calls: PendingCall[] = [];
  contents.forEach((content, i) => {
    const at = `contents[${i}]`;
    if (!isRecord(content)) throw invalidRequest(at, `${at} must be an object.`);
    if (!Array.isArray(content.parts)) throw invalidRequest(`${at}.parts`, `${at}.parts must be an array.`);
    const role = content.role ?? "user";
    const parts = content.parts as unknown[];
    parts.forEach((part, j) => checkPart(part, `${at}.parts[${j}]`));
    if (role === "model") {
      const message = modelMessage(parts as JsonObject[], at, i);
      calls = (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, answered: false }));
      if (message.tool_calls !== undefined || (isString(message.content) && message.content !== "")) messages.push(message);
      return;
    }
    if (role !== "user" && role !== "function") throw invalidRequest(`${at}.role`, `${at}.role must be user or model.`);
    const userParts: ChatUserContentPart[] = [];
    parts.forEach((part, j) => {
      const partAt = `${at}.parts[${j}]`;
      const p = part as JsonObject;
      if (p.functionResponse !== undefined) {
        messages.push(toolMessage(p.functionResponse, `${partAt}.functionResponse`, calls));
        return;
      }
      if (p.functionCall !== undefined) throw invalidRequest(`${partAt}.functionCall`, `${partAt}.functionCall: function calls belong in a model content.`);
      if (p.thought === true) return;
      const converted = userPart(p, partAt, options);
      if (converted !== null) userParts.push(converted);
    });
    if (userParts.length === 0) return;
    const onlyText = userParts.every((part) => part.type === "text");
    messages.push({ role: "user", content: onlyText ? userParts.map((part) => (part as { text: string }).text).join("") : userParts });
  });
  return messages;
}

function checkPart(part: unknown, at: string): void {
  if (!isRecord(part)) throw invalidRequest(at, `${at} must be an object.`);
  for (const key of Object.keys(part)) {
    if (!PART_FIELDS.has(key)) throw invalidRequest(`${at}.${key}`, `${at}.${key} is not supported for this model (no equivalent on its upstream).`);
  }
}

function modelMessage(parts: JsonObject[], at: string, turn: number): ChatAssistantMessage {
  let text = "";
  const toolCalls: ChatToolCall[] = [];
  parts.forEach((part, j) => {
    const partAt = `${at}.parts[${j}]`;
    // Thought summaries are the model's own reasoning, shown to the client; not sent back to a Chat upstream.
    if (part.thought === true) return;
    if (isString(part.text)) text += part.text;
    if (part.inlineData !== undefined) throw invalidRequest(`${partAt}.inlineData`, `${partAt}.inlineData: a model content holds text and function calls only here.`);
    if (part.functionResponse !== undefined) throw invalidRequest(`${partAt}.functionResponse`, `${partAt}.functionResponse belongs in a user content.`);
    if (part.functionCall !== undefined) {
      const call = part.functionCall;
      if (!isRecord(call) || !isString(call.name) || call.name === "") throw invalidRequest(`${partAt}.functionCall.name`, `${partAt}.functionCall.name is required.`);
      if (call.args !== undefined && call.args !== null && !isRecord(call.args))
        throw invalidRequest(`${partAt}.functionCall.args`, `${partAt}.functionCall.args must be an object.`);
      const id = isString(call.id) && call.id !== "" ? call.id : `call_${turn}_${toolCalls.length}`;
      toolCalls.push({ id, type: "function", function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) } });
    }
  });
  const message: ChatAssistantMessage = { role: "assistant", content: text === "" && toolCalls.length > 0 ? null : text };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return message;
}

function toolMessage(response: unknown, at: string, calls: PendingCall[]): ChatMessage {
  if (!isRecord(response) || !isString(response.name)) throw invalidRequest(`${at}.name`, `${at}.name is required.`);
  if (!isRecord(response.response)) throw invalidRequest(`${at}.response`, `${at}.response must be an object.`);
  const id = isString(response.id) && response.id !== "" ? response.id : undefined;
  const call = calls.find((c) => !c.answered && (id !== undefined ? c.id === id : c.name === response.name));
  if (call === undefined) {
    throw invalidRequest(at, `${at} answers no function call of the model content before it (matched by id, else by name).`);
  }
  call.answered = true;
  return { role: "tool", tool_call_id: call.id, content: JSON.stringify(response.response) };
}

function userPart(part: JsonObject, at: string, options: ContentsOptions): ChatUserContentPart | null {
  if (isString(part.text)) return part.text === "" ? null : { type: "text", text: part.text };
  if (part.inlineData !== undefined) {
    const data = part.inlineData;
    if (!isRecord(data) || !isString(data.mimeType) || !isString(data.data)) throw invalidRequest(`${at}.inlineData`, `${at}.inlineData needs mimeType and data.`);
    const mimeType = data.mimeType.toLowerCase();
    if (mimeType.startsWith("image/")) {
      if (!options.imageInput) throw invalidRequest(`${at}.inlineData`, `${at}.inlineData: this model takes no image input.`);
      return { type: "image_url", image_url: { url: `data:${mimeType};base64,${data.data}` } };
    }
    const audio = AUDIO_FORMATS[mimeType];
    if (audio !== undefined) return { type: "input_audio", input_audio: { data: data.data, format: audio } };
    if (mimeType === "application/pdf") return { type: "file", file: { file_data: `data:${mimeType};base64,${data.data}` } };
    throw invalidRequest(`${at}.inlineData.mimeType`, `${at}.inlineData.mimeType ${mimeType} is not supported for this model (images, wav/mp3 audio, PDF).`);
  }
  // A part with only a thought signature (or nothing) carries no content.
  return null;
}
