// Reading a Chat message's `content` where the target format takes plain text only (system,
// assistant and tool turns): the same rule for every translator out of Chat.
import { invalidRequest } from "../../errors/catalogue.js";
import { isRecord, isString, type WarningList } from "./narrow.js";

/** A string, or text and refusal parts joined by newlines; any other part is refused naming its path. */
export function textOf(content: unknown, path: string): string {
  if (content === null || content === undefined) return "";
  if (isString(content)) return content;
  if (!Array.isArray(content)) throw invalidRequest(path, `${path} must be a string or an array of parts.`);
  return content
    .map((part, j) => {
      if (!isRecord(part)) throw invalidRequest(`${path}[${j}]`, `${path}[${j}] must be an object.`);
      if (part.type === "text" && isString(part.text)) return part.text;
      if (part.type === "refusal" && isString(part.refusal)) return part.refusal;
      throw invalidRequest(`${path}[${j}].type`, `${path}[${j}] must be a text part here.`);
    })
    .join("\n");
}

/** A Chat request's function tool, validated; `at` is its path for error messages. */
export interface ChatFunctionTool {
  at: string;
  name: string;
  description?: string;
  parameters: unknown;
  /** The tool's own cache_control marker, unvalidated (LiteLLM's place for it: beside `function`). */
  cacheControl?: unknown;
}

/**
 * The function tools of a Chat request, for a target that takes function tools only: other tool
 * types are dropped with a warning, and so is a tool_choice when no tool is left to send.
 */
export function readChatFunctionTools(body: Record<string, unknown>, warnings: WarningList): ChatFunctionTool[] {
  const toolsValue = body.tools;
  if (toolsValue !== undefined && toolsValue !== null && !Array.isArray(toolsValue)) throw invalidRequest("tools", "tools must be an array.");
  const tools: ChatFunctionTool[] = [];
  (toolsValue ?? []).forEach((tool: unknown, i: number) => {
    const at = `tools[${i}]`;
    if (!isRecord(tool)) throw invalidRequest(at, `${at} must be an object.`);
    if (tool.type !== "function") {
      warnings.add(`${at} (${String(tool.type)}): dropped, only function tools are translated`);
      return;
    }
    const fn = tool.function;
    if (!isRecord(fn) || !isString(fn.name)) throw invalidRequest(`${at}.function.name`, `${at}.function.name is required.`);
    tools.push({
      at,
      name: fn.name,
      ...(isString(fn.description) ? { description: fn.description } : {}),
      parameters: fn.parameters,
      ...(tool.cache_control !== undefined ? { cacheControl: tool.cache_control } : {}),
    });
  });
  if (tools.length === 0 && body.tool_choice !== undefined && body.tool_choice !== null) warnings.add("tool_choice: dropped because no tools are sent");
  return tools;
}

/** The tool's parameters as an object schema (Anthropic and Converse require one, also for no arguments). */
export function objectSchema(parameters: unknown): Record<string, unknown> {
  return isRecord(parameters) ? { type: "object", ...parameters } : { type: "object", properties: {} };
}
