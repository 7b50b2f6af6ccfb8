// Responses `input` (string or items) -> Chat messages (wire-formats.md §2.7). Consecutive function_call
// items become one assistant message with several tool_calls, merged into a directly preceding
// assistant text message; function_call_output items become tool messages. A reasoning item this
// gateway produced (Anthropic thinking in encrypted_content) goes back as the thinking_blocks of the
// assistant message that follows it.
import { invalidRequest } from "../../errors/catalogue.js";
import type { ChatAssistantMessage, ChatMessage, ChatThinkingBlock, ChatUserContentPart } from "../../wire/chat/types.js";
import { isRecord, isString, type JsonObject, type WarningList } from "../../wire/shared/narrow.js";
import { decodeThinkingBlocks } from "../../wire/shared/reasoning.js";
import { flattenToolName } from "./convert-responses-tools-to-chat.js";

export function convertResponsesInputToChat(input: unknown, systemRole: "system" | "developer", warnings: WarningList): ChatMessage[] {
  if (input === undefined || input === null) return [];
  if (isString(input)) return [{ role: "user", content: input }];
  if (!Array.isArray(input)) throw invalidRequest("input", "input must be a string or an array of items.");
  const messages: ChatMessage[] = [];
  let pending: { blocks: ChatThinkingBlock[]; text: string } | undefined;
  /** Hands pending thinking to the assistant message just added or extended. */
  const attachThinking = (): void => {
    const last = messages[messages.length - 1];
    if (pending === undefined || last?.role !== "assistant") return;
    last.thinking_blocks = [...(last.thinking_blocks ?? []), ...pending.blocks];
    last.reasoning_content = (last.reasoning_content ?? "") + pending.text;
    pending = undefined;
  };
  input.forEach((item: unknown, i: number) => {
    const path = `input[${i}]`;
    if (!isRecord(item)) throw invalidRequest(path, `${path} must be an object.`);
    const type = item.type ?? (item.role !== undefined ? "message" : undefined);
    switch (type) {
      case "message":
        messages.push(convertMessageItem(item, path, systemRole, warnings));
        attachThinking();
        return;
      case "function_call":
        appendFunctionCall(messages, item, path, pending !== undefined);
        attachThinking();
        return;
      case "function_call_output":
        messages.push({ role: "tool", tool_call_id: requireString(item.call_id, `${path}.call_id`), content: outputText(item.output, `${path}.output`, warnings) });
        return;
      case "reasoning": {
        const blocks = decodeThinkingBlocks(item.encrypted_content, `${path}.encrypted_content`);
        if (blocks === null) {
          warnings.add("reasoning items without this gateway's encrypted_content: dropped (the upstream cannot read them)");
          return;
        }
        pending = { blocks: [...(pending?.blocks ?? []), ...blocks], text: (pending?.text ?? "") + summaryText(item.summary) };
        return;
      }
      case "item_reference":
        throw invalidRequest(`${path}.type`, "item_reference items are not supported; send the full items or use previous_response_id.");
      default:
        if (!isString(type)) throw invalidRequest(`${path}.type`, `${path}.type is required.`);
        // Built-in tool calls and their outputs (web_search_call, custom_tool_call, local_shell_call, ...).
        warnings.add(`${type} items: dropped (no Chat Completions equivalent)`);
    }
  });
  if (pending !== undefined) warnings.add("reasoning items with no assistant item after them: dropped");
  // Orphan tool outputs are removed by the caller, over history + input together.
  return messages;
}

function summaryText(summary: unknown): string {
  if (!Array.isArray(summary)) return "";
  return summary.map((part: unknown) => (isRecord(part) && isString(part.text) ? part.text : "")).join("");
}

function convertMessageItem(item: JsonObject, path: string, systemRole: "system" | "developer", warnings: WarningList): ChatMessage {
  const content = item.content;
  if (!isString(content) && !Array.isArray(content)) throw invalidRequest(`${path}.content`, `${path}.content must be a string or an array of parts.`);
  switch (item.role) {
    case "system":
    case "developer":
      return { role: systemRole, content: isString(content) ? content : joinText(content, `${path}.content`) };
    case "assistant": {
      if (isString(content)) return { role: "assistant", content };
      const message: ChatAssistantMessage = { role: "assistant", content: joinText(content, `${path}.content`, true) };
      const refusal: unknown = content.find((part: unknown) => isRecord(part) && part.type === "refusal");
      if (isRecord(refusal) && isString(refusal.refusal)) message.refusal = refusal.refusal;
      return message;
    }
    case "user": {
      if (isString(content)) return { role: "user", content };
      const parts = content.map((part: unknown, j: number) => convertUserPart(part, `${path}.content[${j}]`, warnings)).filter((p) => p !== undefined);
      if (parts.length === 1 && parts[0]?.type === "text") return { role: "user", content: parts[0].text };
      return { role: "user", content: parts };
    }
    default:
      throw invalidRequest(`${path}.role`, `${path}.role must be one of user, assistant, system, developer.`);
  }
}

function convertUserPart(part: unknown, path: string, warnings: WarningList): ChatUserContentPart | undefined {
  if (!isRecord(part)) throw invalidRequest(path, `${path} must be an object.`);
  switch (part.type) {
    case "input_text":
    case "output_text":
      return { type: "text", text: requireString(part.text, `${path}.text`) };
    case "input_image": {
      if (!isString(part.image_url)) {
        throw invalidRequest(`${path}.image_url`, "input_image needs image_url (a URL or data URL); file_id is not supported on this model.");
      }
      const detail = part.detail;
      // "original" has no Chat equivalent; Chat's default detail applies.
      return detail === "low" || detail === "high" || detail === "auto"
        ? { type: "image_url", image_url: { url: part.image_url, detail } }
        : { type: "image_url", image_url: { url: part.image_url } };
    }
    case "input_file": {
      const file: { file_id?: string; file_data?: string; filename?: string } = {};
      if (isString(part.file_id)) file.file_id = part.file_id;
      if (isString(part.file_data)) file.file_data = part.file_data;
      if (isString(part.filename)) file.filename = part.filename;
      if (file.file_id === undefined && file.file_data === undefined) {
        warnings.add("input_file parts with file_url: dropped (not supported on this model)");
        return undefined;
      }
      return { type: "file", file };
    }
    default:
      throw invalidRequest(`${path}.type`, `Content part type ${JSON.stringify(part.type)} is not supported in a user message.`);
  }
}

function joinText(parts: unknown[], path: string, allowRefusal = false): string {
  return parts
    .map((part, j) => {
      if (!isRecord(part)) throw invalidRequest(`${path}[${j}]`, `${path}[${j}] must be an object.`);
      if ((part.type === "input_text" || part.type === "output_text" || part.type === "text") && isString(part.text)) return part.text;
      if (allowRefusal && part.type === "refusal") return "";
      throw invalidRequest(`${path}[${j}].type`, `${path}[${j}] must be a text part here.`);
    })
    .join("");
}

/** `ownTurn`: thinking precedes this call, so it starts a new assistant message rather than extending one. */
function appendFunctionCall(messages: ChatMessage[], item: JsonObject, path: string, ownTurn: boolean): void {
  const name = requireString(item.name, `${path}.name`);
  const args = isString(item.arguments) && item.arguments !== "" ? item.arguments : "{}";
  const call = {
    id: requireString(item.call_id, `${path}.call_id`),
    type: "function" as const,
    function: { name: isString(item.namespace) ? flattenToolName(item.namespace, name) : name, arguments: args },
  };
  const last = messages[messages.length - 1];
  if (last !== undefined && last.role === "assistant" && !(ownTurn && (last.tool_calls?.length ?? 0) > 0)) {
    last.tool_calls = [...(last.tool_calls ?? []), call];
    return;
  }
  messages.push({ role: "assistant", content: null, tool_calls: [call] });
}

function outputText(output: unknown, path: string, warnings: WarningList): string {
  if (isString(output)) return output;
  if (!Array.isArray(output)) throw invalidRequest(path, `${path} must be a string or an array of parts.`);
  const texts: string[] = [];
  for (const part of output) {
    if (isRecord(part) && (part.type === "input_text" || part.type === "output_text") && isString(part.text)) texts.push(part.text);
    else warnings.add("function_call_output non-text parts: dropped (Chat tool messages are text-only)");
  }
  return texts.join("\n");
}

/** Chat rejects a tool message that answers no earlier tool call (e.g. the output of a dropped built-in call). */
export function dropOrphanToolMessages(messages: ChatMessage[], warnings: WarningList): ChatMessage[] {
  const callIds = new Set<string>();
  return messages.filter((message) => {
    if (message.role === "assistant") for (const call of message.tool_calls ?? []) callIds.add(call.id);
    if (message.role !== "tool" || callIds.has(message.tool_call_id)) return true;
    warnings.add(`tool output for call ${message.tool_call_id}: dropped, no matching function_call`);
    return false;
  });
}

function requireString(value: unknown, path: string): string {
  if (!isString(value)) throw invalidRequest(path, `${path} must be a string.`);
  return value;
}
