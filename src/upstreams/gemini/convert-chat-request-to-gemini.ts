// Chat Completions request -> Gemini generateContent request, for Chat clients on Gemini upstreams.
// The model and the stream flag travel in the URL, not in the body.
import { invalidRequest } from "../../errors/catalogue.js";
import { isNumber, isRecord, isString, WarningList, type JsonObject } from "../../wire/shared/narrow.js";
import { readChatFunctionTools } from "../../wire/shared/chat-content.js";
import { handledFields, readOutputLimit, readStopSequences, warnDroppedFields } from "../../wire/shared/chat-request.js";
import { convertChatMessagesToContents } from "./convert-chat-messages-to-contents.js";
import { convertSchema } from "./convert-schema.js";
import type { GeminiFunctionDeclaration, GeminiGenerationConfig, GeminiRequest, GeminiToolConfig } from "../../wire/gemini/types.js";

/**
 * reasoning_effort -> thinkingConfig.thinkingBudget, the budgets Google documents for its own
 * OpenAI-compatible endpoint (low 1,024, medium 8,192, high 24,576; none turns thinking off).
 * minimal is the smallest budget, xhigh and max the largest of the table.
 */
const THINKING_BUDGETS: Readonly<Record<string, number>> = { none: 0, minimal: 1024, low: 1024, medium: 8192, high: 24576, xhigh: 24576, max: 24576 };

/** Gemini accepts at most five stop sequences. */
const MAX_STOP_SEQUENCES = 5;

/** Fields consumed here beyond the common ones (chat-request.ts). */
const HANDLED_FIELDS = handledFields(["seed", "presence_penalty", "frequency_penalty", "response_format"]);

export function convertChatRequestToGemini(body: unknown): { request: GeminiRequest; warnings: string[] } {
  if (!isRecord(body)) throw invalidRequest("body", "The request body must be a JSON object.");
  const warnings = new WarningList();
  if (!Array.isArray(body.messages)) throw invalidRequest("messages", "messages must be an array.");
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw invalidRequest("n", "n must be 1 for this model: the upstream returns a single choice.");
  const { systemText, contents } = convertChatMessagesToContents(body.messages, warnings);
  const request: GeminiRequest = { contents };
  if (systemText !== undefined) request.systemInstruction = { parts: [{ text: systemText }] };
  applyTools(body, request, warnings);
  const generationConfig = convertGenerationConfig(body, warnings);
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig;
  warnDroppedFields(body, HANDLED_FIELDS, "Gemini", warnings);
  return { request, warnings: warnings.toArray() };
}

function convertGenerationConfig(body: JsonObject, warnings: WarningList): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const limit = readOutputLimit(body);
  if (limit !== undefined) config.maxOutputTokens = limit;
  if (isNumber(body.temperature)) config.temperature = body.temperature;
  if (isNumber(body.top_p)) config.topP = body.top_p;
  if (isNumber(body.seed)) config.seed = body.seed;
  if (isNumber(body.presence_penalty)) config.presencePenalty = body.presence_penalty;
  if (isNumber(body.frequency_penalty)) config.frequencyPenalty = body.frequency_penalty;
  const stop = readStopSequences(body.stop);
  if (stop !== undefined) {
    if (stop.length > MAX_STOP_SEQUENCES) throw invalidRequest("stop", `stop holds at most ${MAX_STOP_SEQUENCES} sequences for this model.`);
    config.stopSequences = stop;
  }
  applyResponseFormat(body.response_format, config, warnings);
  if (body.reasoning_effort !== undefined && body.reasoning_effort !== null) {
    const budget = isString(body.reasoning_effort) ? THINKING_BUDGETS[body.reasoning_effort] : undefined;
    if (budget === undefined) throw invalidRequest("reasoning_effort", "reasoning_effort must be one of none, minimal, low, medium, high, xhigh, max.");
    // Thought summaries come back only when asked for; they become the answer's reasoning_content.
    config.thinkingConfig = budget > 0 ? { thinkingBudget: budget, includeThoughts: true } : { thinkingBudget: budget };
  }
  return config;
}

function applyResponseFormat(format: unknown, config: GeminiGenerationConfig, warnings: WarningList): void {
  if (format === undefined || format === null) return;
  if (!isRecord(format)) throw invalidRequest("response_format", "response_format must be an object.");
  if (format.type === "text") return;
  if (format.type === "json_object") {
    config.responseMimeType = "application/json";
    return;
  }
  if (format.type === "json_schema") {
    const spec = format.json_schema;
    if (!isRecord(spec)) throw invalidRequest("response_format.json_schema", "response_format.json_schema is required.");
    config.responseMimeType = "application/json";
    if (isRecord(spec.schema)) config.responseSchema = convertSchema(spec.schema, "response_format.json_schema.schema", warnings);
    return;
  }
  throw invalidRequest("response_format.type", "response_format.type must be text, json_object or json_schema.");
}

function applyTools(body: JsonObject, request: GeminiRequest, warnings: WarningList): void {
  const declarations = readChatFunctionTools(body, warnings).map(({ at, name, description, parameters }) => {
    const declaration: GeminiFunctionDeclaration = { name };
    if (description !== undefined) declaration.description = description;
    // A function without parameters has none in Gemini: an empty object schema is refused.
    const schema = convertSchema(parameters, `${at}.function.parameters`, warnings);
    if (isRecord(schema.properties) && Object.keys(schema.properties).length > 0) declaration.parameters = schema;
    return declaration;
  });
  if (declarations.length === 0) return;
  request.tools = [{ functionDeclarations: declarations }];
  const toolConfig = convertToolChoice(body.tool_choice, warnings);
  if (toolConfig !== undefined) request.toolConfig = toolConfig;
  if (body.parallel_tool_calls === false) warnings.add("parallel_tool_calls: dropped (Gemini has no switch for parallel calls)");
}

function convertToolChoice(choice: unknown, warnings: WarningList): GeminiToolConfig | undefined {
  if (choice === undefined || choice === null) return undefined;
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } };
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (isRecord(choice) && choice.type === "function") {
    const fn = choice.function;
    if (!isRecord(fn) || !isString(fn.name)) throw invalidRequest("tool_choice.function.name", "tool_choice.function.name is required.");
    return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [fn.name] } };
  }
  if (isRecord(choice) && choice.type === "allowed_tools") {
    const allowed = choice.allowed_tools;
    if (!isRecord(allowed) || !Array.isArray(allowed.tools)) throw invalidRequest("tool_choice.allowed_tools.tools", "tool_choice.allowed_tools.tools must be an array.");
    const names = allowed.tools.map((tool: unknown, i: number) => {
      const name = isRecord(tool) && isRecord(tool.function) ? tool.function.name : undefined;
      if (!isString(name)) throw invalidRequest(`tool_choice.allowed_tools.tools[${i}].function.name`, "Each allowed tool needs function.name.");
      return name;
    });
    if (allowed.mode === "required") return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: names } };
    // Gemini honours allowedFunctionNames in ANY mode only.
    warnings.add("tool_choice allowed_tools (auto): sent as AUTO over all tools (Gemini limits names in ANY mode only)");
    return { functionCallingConfig: { mode: "AUTO" } };
  }
  throw invalidRequest("tool_choice", "tool_choice must be none, auto, required or a function choice.");
}
