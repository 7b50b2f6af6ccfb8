// Gemini generateContent request -> Chat Completions request, for Gemini clients on Chat upstreams.
// The model and the stream choice come from the path (the route), not the body. Every field is
// translated, or ignored where docs/clients.md says so (named in x-gateway-warnings), or refused
// with 400 naming it: nothing is dropped silently.
import { invalidRequest } from "../../errors/catalogue.js";
import type { ChatFunctionTool, ChatReasoningEffort, ChatRequest, ChatToolChoice } from "../../wire/chat/types.js";
import { isNumber, isRecord, isString, WarningList, type JsonObject } from "../../wire/shared/narrow.js";
import { effortForThinkingBudget } from "../../wire/shared/reasoning.js";
import { convertGeminiContentsToChat, systemInstructionText } from "./convert-gemini-contents-to-chat.js";
import { convertGeminiSchema } from "./convert-gemini-schema.js";

export interface GeminiToChatRequestOptions {
  /** The gateway model id, written into the Chat request. */
  model: string;
  stream: boolean;
  /** The upstream's Chat plan carries reasoning_effort: thinkingConfig becomes one (else it is dropped with a warning). */
  reasoningEffort: boolean;
  /** The model takes image input. */
  imageInput: boolean;
}

/** Top-level fields: translated, or ignored with a warning (safetySettings; model: the path names it). */
const REQUEST_FIELDS = new Set(["contents", "systemInstruction", "generationConfig", "tools", "toolConfig", "safetySettings", "model"]);
const GENERATION_FIELDS = new Set([
  "maxOutputTokens",
  "temperature",
  "topP",
  "topK",
  "stopSequences",
  "candidateCount",
  "responseMimeType",
  "responseSchema",
  "responseJsonSchema",
  "responseModalities",
  "seed",
  "presencePenalty",
  "frequencyPenalty",
  "thinkingConfig",
]);
const DECLARATION_FIELDS = new Set(["name", "description", "parameters", "parametersJsonSchema", "response", "responseJsonSchema"]);
const THINKING_LEVELS: Readonly<Record<string, ChatReasoningEffort>> = { MINIMAL: "minimal", LOW: "low", MEDIUM: "medium", HIGH: "high" };

export function convertGeminiRequestToChat(body: JsonObject, options: GeminiToChatRequestOptions): { request: ChatRequest; warnings: string[]; includeThoughts: boolean } {
  const warnings = new WarningList();
  for (const key of Object.keys(body)) {
    if (!REQUEST_FIELDS.has(key)) throw invalidRequest(key, `${key} is not supported for this model (its upstream has no equivalent).`);
  }
  if (!Array.isArray(body.contents) || body.contents.length === 0) throw invalidRequest("contents", "contents must be a non-empty array.");
  const request: ChatRequest = { model: options.model, messages: [] };
  const system = systemInstructionText(body.systemInstruction);
  if (system !== undefined) request.messages.push({ role: "system", content: system });
  request.messages.push(...convertGeminiContentsToChat(body.contents, { imageInput: options.imageInput }));
  if (body.safetySettings !== undefined) warnings.add("safetySettings: ignored (the upstream applies its own safety policy)");
  const includeThoughts = applyGenerationConfig(body.generationConfig, request, options, warnings);
  applyTools(body.tools, body.toolConfig, request);
  if (options.stream) {
    request.stream = true;
    // usageMetadata needs the usage, which a Chat stream reports only when asked.
    request.stream_options = { include_usage: true };
  }
  return { request, warnings: warnings.toArray(), includeThoughts };
}

function applyGenerationConfig(config: unknown, request: ChatRequest, options: GeminiToChatRequestOptions, warnings: WarningList): boolean {
  if (config === undefined || config === null) return false;
  if (!isRecord(config)) throw invalidRequest("generationConfig", "generationConfig must be an object.");
  const at = (key: string) => `generationConfig.${key}`;
  for (const key of Object.keys(config)) {
    if (!GENERATION_FIELDS.has(key)) throw invalidRequest(at(key), `${at(key)} is not supported for this model (its upstream has no equivalent).`);
  }
  const number = (key: string): number | undefined => {
    const value = config[key];
    if (value === undefined || value === null) return undefined;
    if (!isNumber(value)) throw invalidRequest(at(key), `${at(key)} must be a number.`);
    return value;
  };
  const limit = number("maxOutputTokens");
  if (limit !== undefined) request.max_tokens = limit;
  const copies: Array<[string, string]> = [
    ["temperature", "temperature"],
    ["topP", "top_p"],
    ["seed", "seed"],
    ["presencePenalty", "presence_penalty"],
    ["frequencyPenalty", "frequency_penalty"],
  ];
  for (const [from, to] of copies) {
    const value = number(from);
    if (value !== undefined) request[to] = value;
  }
  if (config.topK !== undefined) warnings.add("generationConfig.topK: ignored (Chat upstreams have no top-k sampling)");
  const candidates = number("candidateCount");
  if (candidates !== undefined && candidates !== 1) throw invalidRequest(at("candidateCount"), `${at("candidateCount")} must be 1: the gateway returns a single candidate.`);
  if (config.stopSequences !== undefined) {
    const stop = config.stopSequences;
    if (!Array.isArray(stop) || !stop.every(isString) || stop.length > 4)
      throw invalidRequest(at("stopSequences"), `${at("stopSequences")} must be at most 4 strings for this model.`);
    if (stop.length > 0) request.stop = stop;
  }
  if (config.responseModalities !== undefined) {
    const modalities = config.responseModalities;
    if (!Array.isArray(modalities) || !modalities.every((m) => m === "TEXT"))
      throw invalidRequest(at("responseModalities"), `${at("responseModalities")}: this model answers TEXT only.`);
  }
  applyResponseFormat(config, request);
  return applyThinking(config.thinkingConfig, request, options.reasoningEffort, warnings);
}

function applyResponseFormat(config: JsonObject, request: ChatRequest): void {
  const mime = config.responseMimeType;
  const schema = config.responseJsonSchema ?? (config.responseSchema === undefined ? undefined : convertGeminiSchema(config.responseSchema, "generationConfig.responseSchema"));
  if (mime === undefined || mime === null || mime === "text/plain") {
    if (schema !== undefined) throw invalidRequest("generationConfig.responseMimeType", "generationConfig.responseMimeType must be application/json with a response schema.");
    return;
  }
  if (mime !== "application/json")
    throw invalidRequest("generationConfig.responseMimeType", "generationConfig.responseMimeType must be text/plain or application/json for this model.");
  if (schema === undefined) {
    request.response_format = { type: "json_object" };
    return;
  }
  if (!isRecord(schema)) throw invalidRequest("generationConfig.responseJsonSchema", "generationConfig.responseJsonSchema must be an object.");
  request.response_format = { type: "json_schema", json_schema: { name: "response", schema } };
}

/** thinkingConfig -> reasoning_effort; returns includeThoughts (thought parts in the answer). */
function applyThinking(thinking: unknown, request: ChatRequest, upstreamTakesEffort: boolean, warnings: WarningList): boolean {
  if (thinking === undefined || thinking === null) return false;
  const at = "generationConfig.thinkingConfig";
  if (!isRecord(thinking)) throw invalidRequest(at, `${at} must be an object.`);
  for (const key of Object.keys(thinking)) {
    if (key !== "thinkingBudget" && key !== "includeThoughts" && key !== "thinkingLevel") throw invalidRequest(`${at}.${key}`, `${at}.${key} is not supported for this model.`);
  }
  let effort: ChatReasoningEffort | undefined;
  const budget = thinking.thinkingBudget;
  if (budget !== undefined && budget !== null) {
    if (!isNumber(budget) || !Number.isInteger(budget) || budget < -1)
      throw invalidRequest(`${at}.thinkingBudget`, `${at}.thinkingBudget must be -1 (dynamic), 0 (off) or a positive integer.`);
    // -1: the model decides, which is what a request without an effort gets.
    if (budget === 0) effort = "none";
    else if (budget > 0) effort = effortForThinkingBudget(budget);
  }
  const level = thinking.thinkingLevel;
  if (level !== undefined && level !== null && level !== "THINKING_LEVEL_UNSPECIFIED") {
    const mapped = isString(level) ? THINKING_LEVELS[level.toUpperCase()] : undefined;
    if (mapped === undefined) throw invalidRequest(`${at}.thinkingLevel`, `${at}.thinkingLevel must be MINIMAL, LOW, MEDIUM or HIGH.`);
    effort = mapped;
  }
  if (effort !== undefined) {
    if (upstreamTakesEffort) request.reasoning_effort = effort;
    else warnings.add("thinkingConfig: dropped (this model's upstream takes no reasoning effort)");
  }
  if (thinking.includeThoughts !== undefined && typeof thinking.includeThoughts !== "boolean")
    throw invalidRequest(`${at}.includeThoughts`, `${at}.includeThoughts must be true or false.`);
  return thinking.includeThoughts === true;
}

function applyTools(tools: unknown, toolConfig: unknown, request: ChatRequest): void {
  if (tools === undefined || tools === null) {
    if (toolConfig !== undefined && toolConfig !== null) applyToolConfig(toolConfig, request);
    return;
  }
  if (!Array.isArray(tools)) throw invalidRequest("tools", "tools must be an array.");
  const functions: ChatFunctionTool[] = [];
  tools.forEach((tool: unknown, i: number) => {
    if (!isRecord(tool)) throw invalidRequest(`tools[${i}]`, `tools[${i}] must be an object.`);
    for (const key of Object.keys(tool)) {
      if (key !== "functionDeclarations") throw invalidRequest(`tools[${i}].${key}`, `tools[${i}].${key} is not supported for this model: only functionDeclarations are.`);
    }
    const declarations = tool.functionDeclarations;
    if (!Array.isArray(declarations)) throw invalidRequest(`tools[${i}].functionDeclarations`, `tools[${i}].functionDeclarations must be an array.`);
    declarations.forEach((declaration: unknown, j: number) => functions.push(functionTool(declaration, `tools[${i}].functionDeclarations[${j}]`)));
  });
  if (functions.length > 0) request.tools = functions;
  if (toolConfig !== undefined && toolConfig !== null) applyToolConfig(toolConfig, request);
}

function functionTool(declaration: unknown, at: string): ChatFunctionTool {
  if (!isRecord(declaration) || !isString(declaration.name) || declaration.name === "") throw invalidRequest(`${at}.name`, `${at}.name is required.`);
  for (const key of Object.keys(declaration)) {
    if (!DECLARATION_FIELDS.has(key)) throw invalidRequest(`${at}.${key}`, `${at}.${key} is not supported for this model.`);
  }
  let parameters: JsonObject = { type: "object", properties: {} };
  if (declaration.parametersJsonSchema !== undefined) {
    if (!isRecord(declaration.parametersJsonSchema)) throw invalidRequest(`${at}.parametersJsonSchema`, `${at}.parametersJsonSchema must be an object.`);
    parameters = declaration.parametersJsonSchema;
  } else if (declaration.parameters !== undefined) {
    parameters = convertGeminiSchema(declaration.parameters, `${at}.parameters`);
  }
  const fn: ChatFunctionTool["function"] = { name: declaration.name, parameters };
  if (isString(declaration.description)) fn.description = declaration.description;
  return { type: "function", function: fn };
}

function applyToolConfig(toolConfig: unknown, request: ChatRequest): void {
  const at = "toolConfig.functionCallingConfig";
  if (!isRecord(toolConfig)) throw invalidRequest("toolConfig", "toolConfig must be an object.");
  for (const key of Object.keys(toolConfig)) {
    if (key !== "functionCallingConfig") throw invalidRequest(`toolConfig.${key}`, `toolConfig.${key} is not supported for this model.`);
  }
  const config = toolConfig.functionCallingConfig;
  if (config === undefined) return;
  if (!isRecord(config)) throw invalidRequest(at, `${at} must be an object.`);
  const names = config.allowedFunctionNames;
  if (names !== undefined && (!Array.isArray(names) || !names.every(isString)))
    throw invalidRequest(`${at}.allowedFunctionNames`, `${at}.allowedFunctionNames must be an array of names.`);
  const mode = config.mode ?? "AUTO";
  let choice: ChatToolChoice;
  if (mode === "AUTO" || mode === "MODE_UNSPECIFIED") choice = "auto";
  else if (mode === "NONE") choice = "none";
  else if (mode === "ANY") {
    const allowed = names ?? [];
    if (allowed.length === 1) choice = { type: "function", function: { name: allowed[0]! } };
    else if (allowed.length > 1) choice = { type: "allowed_tools", allowed_tools: { mode: "required", tools: allowed.map((name) => ({ type: "function", function: { name } })) } };
    else choice = "required";
  } else throw invalidRequest(`${at}.mode`, `${at}.mode must be AUTO, ANY or NONE for this model.`);
  if (names !== undefined && mode !== "ANY") throw invalidRequest(`${at}.allowedFunctionNames`, `${at}.allowedFunctionNames is honoured in ANY mode only.`);
  request.tool_choice = choice;
}
