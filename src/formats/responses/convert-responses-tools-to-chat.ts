// Responses tools and tool_choice -> Chat. Function tools move from the flat Responses shape to Chat's
// nested one; function tools inside a `namespace` tool are flattened to "<namespace>__<name>" and the
// mapping is returned so replies can restore the namespace. Built-in tools are dropped with a warning.
import { invalidRequest } from "../../errors/catalogue.js";
import type { ChatFunctionTool, ChatToolChoice } from "../../wire/chat/types.js";
import { isRecord, isString, type JsonObject, type WarningList } from "../../wire/shared/narrow.js";

/** Flattened Chat tool name -> the namespace and name the Responses client knows. */
export type ToolNamespaces = Record<string, { namespace: string; name: string }>;

export function flattenToolName(namespace: string, name: string): string {
  // Chat tool names allow [a-zA-Z0-9_-] only.
  return `${namespace}__${name}`.replace(/[^a-zA-Z0-9_-]/g, "_");
}

export function convertResponsesToolsToChat(tools: unknown, warnings: WarningList): { tools: ChatFunctionTool[]; toolNamespaces: ToolNamespaces } {
  const toolNamespaces: ToolNamespaces = {};
  if (tools === undefined || tools === null) return { tools: [], toolNamespaces };
  if (!Array.isArray(tools)) throw invalidRequest("tools", "tools must be an array.");
  const result: ChatFunctionTool[] = [];
  tools.forEach((tool: unknown, i: number) => {
    const path = `tools[${i}]`;
    if (!isRecord(tool)) throw invalidRequest(path, `${path} must be an object.`);
    if (tool.type === "function") {
      result.push(convertFunctionTool(tool, path, undefined));
    } else if (tool.type === "namespace" && isString(tool.name) && Array.isArray(tool.tools)) {
      const namespace = tool.name;
      tool.tools.forEach((inner: unknown, j: number) => {
        if (!isRecord(inner) || inner.type !== "function") {
          warnings.add(`${path}.tools[${j}]: non-function tools inside a namespace dropped`);
          return;
        }
        const converted = convertFunctionTool(inner, `${path}.tools[${j}]`, namespace);
        toolNamespaces[converted.function.name] = { namespace, name: String(inner.name) };
        result.push(converted);
      });
    } else {
      warnings.add(`tools[${i}] (${String(tool.type)}): dropped, built-in tools are not available on this model`);
    }
  });
  return { tools: result, toolNamespaces };
}

function convertFunctionTool(tool: JsonObject, path: string, namespace: string | undefined): ChatFunctionTool {
  if (!isString(tool.name) || tool.name === "") throw invalidRequest(`${path}.name`, `${path}.name is required.`);
  const fn: ChatFunctionTool["function"] = { name: namespace === undefined ? tool.name : flattenToolName(namespace, tool.name) };
  if (isString(tool.description)) fn.description = tool.description;
  if (isRecord(tool.parameters)) fn.parameters = tool.parameters;
  if (typeof tool.strict === "boolean") fn.strict = tool.strict;
  return { type: "function", function: fn };
}

export function convertResponsesToolChoiceToChat(choice: unknown, warnings: WarningList): ChatToolChoice | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === "none" || choice === "auto" || choice === "required") return choice;
  if (!isRecord(choice)) throw invalidRequest("tool_choice", "tool_choice must be a string or an object.");
  if (choice.type === "function") {
    if (!isString(choice.name)) throw invalidRequest("tool_choice.name", "tool_choice.name is required for a function choice.");
    return { type: "function", function: { name: choice.name } };
  }
  if (choice.type === "allowed_tools") {
    const mode = choice.mode === "required" ? "required" : "auto";
    const tools = Array.isArray(choice.tools) ? choice.tools : [];
    const named = tools.filter((t): t is JsonObject => isRecord(t) && t.type === "function" && isString(t.name));
    return { type: "allowed_tools", allowed_tools: { mode, tools: named.map((t) => ({ type: "function", function: { name: String(t.name) } })) } };
  }
  warnings.add(`tool_choice ${String(choice.type)}: dropped, that tool is not available on this model`);
  return undefined;
}
