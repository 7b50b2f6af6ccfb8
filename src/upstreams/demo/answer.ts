// The demo upstream's answers: made up from the request alone, deterministic (the same request
// always gets the same answer), and never pretending to come from a real model. A Chat Completions
// request in, one answer out: text derived from the prompt, or a call of an offered tool, or, after
// a tool result, a sentence about that result; usage counted at about four characters a token.

export type DemoAnswer =
  { kind: "text"; text: string; finishReason: "stop" | "length"; usage: DemoUsage } | { kind: "tool"; id: string; name: string; arguments: string; usage: DemoUsage };

export interface DemoUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

interface LooseMessage {
  role?: unknown;
  content?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
}

interface LooseTool {
  type?: unknown;
  function?: { name?: unknown; parameters?: unknown };
}

interface JsonSchema {
  type?: unknown;
  properties?: Record<string, JsonSchema>;
  required?: unknown;
  enum?: unknown;
  items?: JsonSchema;
}

const CHARS_PER_TOKEN = 4;
const tokens = (text: string) => Math.ceil(text.length / CHARS_PER_TOKEN);

/** The text of a message's content: a string, or the text parts of a list. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => {
      const p = part as { text?: unknown; type?: unknown };
      return typeof p?.text === "string" ? p.text : "";
    })
    .join(" ");
}

/** The first characters of a text on one line, for quoting back. */
function snippet(text: string, length: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > length ? `${flat.slice(0, length)}…` : flat;
}

/** What every message and tool of the request weigh, in the same four-characters-a-token measure. */
function promptTokens(messages: readonly LooseMessage[], tools: readonly LooseTool[]): number {
  let count = 0;
  for (const message of messages) {
    count += 4 + tokens(textOf(message.content));
    if (Array.isArray(message.tool_calls)) count += tokens(JSON.stringify(message.tool_calls));
  }
  if (tools.length > 0) count += tokens(JSON.stringify(tools));
  return Math.max(count, 1);
}

/** A value for a JSON schema: the first enum value, a harmless command for a shell tool, else a placeholder of the type. */
function valueFor(name: string, schema: JsonSchema | undefined): unknown {
  if (Array.isArray(schema?.enum) && schema.enum.length > 0) return schema.enum[0];
  const type = Array.isArray(schema?.type) ? (schema.type as unknown[])[0] : schema?.type;
  const isCommand = name === "command" || name === "cmd";
  switch (type) {
    case "array":
      return isCommand ? ["echo", "hello from the demo model"] : [];
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return false;
    case "object":
      return argumentsFor(schema);
    default:
      return isCommand ? "echo hello from the demo model" : "demo";
  }
}

/** Arguments that satisfy a tool's required parameters (optional ones are left out). */
function argumentsFor(schema: JsonSchema | undefined): Record<string, unknown> {
  const required = Array.isArray(schema?.required) ? (schema.required as unknown[]).filter((r): r is string => typeof r === "string") : [];
  const out: Record<string, unknown> = {};
  for (const name of required) out[name] = valueFor(name, schema?.properties?.[name]);
  return out;
}

/**
 * The tool the demo calls: one that runs a shell command (its command is an echo, so nothing
 * changes), else the first tool offered.
 */
function pickTool(tools: readonly LooseTool[]): { name: string; parameters: JsonSchema | undefined } | null {
  const functions = tools.flatMap((t) =>
    t.type === "function" && typeof t.function?.name === "string" ? [{ name: t.function.name, parameters: t.function.parameters as JsonSchema | undefined }] : [],
  );
  const shell = functions.find((f) => {
    const required = Array.isArray(f.parameters?.required) ? (f.parameters.required as unknown[]) : [];
    return required.includes("command") || required.includes("cmd");
  });
  return shell ?? functions[0] ?? null;
}

/** A stable id from the request's text (the same request gets the same call id). */
function callId(seed: string): string {
  let hash = 2166136261;
  for (let i = 0; i < seed.length; i++) hash = Math.imul(hash ^ seed.charCodeAt(i), 16777619) >>> 0;
  return `call_demo_${hash.toString(36)}`;
}

function usage(prompt: number, completion: number): DemoUsage {
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The demo's answer to one Chat Completions request body. */
export function demoAnswer(body: Record<string, unknown>): DemoAnswer {
  const model = typeof body.model === "string" ? body.model : "demo";
  const messages = (Array.isArray(body.messages) ? body.messages : []) as LooseMessage[];
  const tools = (Array.isArray(body.tools) ? body.tools : []) as LooseTool[];
  const limitField = body.max_completion_tokens ?? body.max_tokens;
  const limit = typeof limitField === "number" && limitField > 0 ? Math.floor(limitField) : Number.MAX_SAFE_INTEGER;
  const prompt = promptTokens(messages, tools);
  // A tool result answers the last assistant turn; a client may add a user message after it (Claude
  // Code's reminders), so it is any tool message since that turn, not only the last message.
  const lastAssistant = messages.findLastIndex((m) => m.role === "assistant");
  const toolResult = messages.slice(lastAssistant + 1).findLast((m) => m.role === "tool");

  if (toolResult === undefined && tools.length > 0 && body.tool_choice !== "none") {
    const tool = pickTool(tools);
    if (tool) {
      const args = JSON.stringify(argumentsFor(tool.parameters));
      const completion = tokens(tool.name) + tokens(args) + 3;
      if (completion <= limit) return { kind: "tool", id: callId(JSON.stringify(messages)), name: tool.name, arguments: args, usage: usage(prompt, completion) };
    }
  }

  let text: string;
  if (toolResult !== undefined) {
    const result = textOf(toolResult.content);
    text = `Demo model ${model}: the tool answered with ${result.length} characters, beginning "${snippet(result, 60)}". That completes a tool round trip through Model Gateway's built-in demo upstream (no real model was called).`;
  } else {
    const userText = [...messages].reverse().find((m) => m.role === "user");
    const said = textOf(userText?.content);
    const words = said.split(/\s+/).filter(Boolean).length;
    text =
      `This is ${model}, the built-in demo of Model Gateway, not a real model. ` +
      `Your message had ${words} ${words === 1 ? "word" : "words"} and began "${snippet(said, 60)}". ` +
      "Streaming, billing and the usage chart all work on this answer; add a provider to gateway.config.yaml to reach a real model.";
  }
  const completion = tokens(text);
  if (completion <= limit) return { kind: "text", text, finishReason: "stop", usage: usage(prompt, completion) };
  const cut = text.slice(0, limit * CHARS_PER_TOKEN);
  return { kind: "text", text: cut, finishReason: "length", usage: usage(prompt, tokens(cut)) };
}
