// A mock of Google's Gemini API (generativelanguage.googleapis.com v1beta) on 127.0.0.1, random port.
// It checks what the real API checks before answering: the x-goog-api-key header, the path and query
// (models/{model}:generateContent, or :streamGenerateContent?alt=sse, :countTokens or :batchEmbedContents), and the
// body's shape (known top-level fields only, user/model roles, one data field per part, the Schema
// subset in function declarations; for embeddings, at most 100 text requests for the path's model). A violation is answered the way Gemini answers it: 400 INVALID_ARGUMENT, or 400
// API_KEY_INVALID for a wrong key. Scenarios set `answer` to respond in the documented format.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface GeminiRecorded {
  path: string;
  operation: "generateContent" | "streamGenerateContent" | "batchEmbedContents" | "countTokens";
  stream: boolean;
  model: string;
  key: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export type GeminiAnswer = (request: GeminiRecorded, res: ServerResponse) => void | Promise<void>;

export interface GeminiMock {
  url: string;
  host: string;
  requests: GeminiRecorded[];
  answer: GeminiAnswer;
  close(): Promise<void>;
}

const REQUEST_FIELDS = new Set(["contents", "systemInstruction", "tools", "toolConfig", "generationConfig", "safetySettings", "cachedContent"]);
const GENERATION_FIELDS = new Set([
  "maxOutputTokens",
  "temperature",
  "topP",
  "topK",
  "stopSequences",
  "seed",
  "presencePenalty",
  "frequencyPenalty",
  "responseMimeType",
  "responseSchema",
  "thinkingConfig",
  "candidateCount",
]);
const PART_FIELDS = ["text", "inlineData", "fileData", "functionCall", "functionResponse"];
const SCHEMA_FIELDS = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "maxItems",
  "minItems",
  "properties",
  "required",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "example",
  "anyOf",
  "propertyOrdering",
  "default",
  "items",
  "minimum",
  "maximum",
]);
const PATH = /^\/v1beta\/models\/([A-Za-z0-9._-]+):(generateContent|streamGenerateContent|batchEmbedContents|countTokens)(\?alt=sse)?$/;
const EMBED_FIELDS = new Set(["model", "content", "taskType", "title", "outputDimensionality"]);
const TASK_TYPES = new Set([
  "TASK_TYPE_UNSPECIFIED",
  "RETRIEVAL_QUERY",
  "RETRIEVAL_DOCUMENT",
  "SEMANTIC_SIMILARITY",
  "CLASSIFICATION",
  "CLUSTERING",
  "QUESTION_ANSWERING",
  "FACT_VERIFICATION",
  "CODE_RETRIEVAL_QUERY",
]);

export function geminiError(res: ServerResponse, code: number, status: string, message: string, extra: object = {}, headers: Record<string, string> = {}): void {
  res.writeHead(code, { "content-type": "application/json; charset=UTF-8", ...headers });
  res.end(JSON.stringify({ error: { code, message, status, ...extra } }));
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function schemaProblem(schema: unknown, at: string): string | null {
  if (!isObject(schema)) return `${at}: not an object`;
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_FIELDS.has(key)) return `Invalid JSON payload received. Unknown name "${key}" at '${at}': Cannot find field.`;
    if (key === "properties" && isObject(value)) {
      for (const [name, property] of Object.entries(value)) {
        const problem = schemaProblem(property, `${at}.properties[${name}].value`);
        if (problem) return problem;
      }
    }
    if (key === "items") return schemaProblem(value, `${at}.items`);
  }
  return null;
}

/** What the real API would refuse in this body, or null. */
export function bodyProblem(body: unknown): string | null {
  if (!isObject(body)) return "Invalid JSON payload received.";
  for (const key of Object.keys(body)) if (!REQUEST_FIELDS.has(key)) return `Invalid JSON payload received. Unknown name "${key}": Cannot find field.`;
  const contents = body.contents;
  if (!Array.isArray(contents) || contents.length === 0) return "* GenerateContentRequest.contents: contents is not specified";
  for (const [i, content] of contents.entries()) {
    if (!isObject(content) || (content.role !== "user" && content.role !== "model")) return `Please use a valid role: user, model. (contents[${i}])`;
    if (!Array.isArray(content.parts) || content.parts.length === 0) return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`;
    for (const [j, part] of content.parts.entries()) {
      const fields = isObject(part) ? PART_FIELDS.filter((field) => field in part) : [];
      if (fields.length !== 1) return `* GenerateContentRequest.contents[${i}].parts[${j}].data: required oneof field 'data' must have one initialized field`;
      if (isObject(part) && part.text === "") return `* GenerateContentRequest.contents[${i}].parts[${j}].text: empty text`;
    }
  }
  if (body.systemInstruction !== undefined && !(isObject(body.systemInstruction) && Array.isArray(body.systemInstruction.parts))) return "systemInstruction: bad shape";
  if (body.generationConfig !== undefined) {
    if (!isObject(body.generationConfig)) return "generationConfig: bad shape";
    for (const key of Object.keys(body.generationConfig)) if (!GENERATION_FIELDS.has(key)) return `Unknown name "${key}" at 'generation_config'`;
  }
  for (const tool of Array.isArray(body.tools) ? body.tools : []) {
    const declarations = isObject(tool) ? tool.functionDeclarations : undefined;
    if (!Array.isArray(declarations)) return "tools[]: functionDeclarations required";
    for (const declaration of declarations) {
      if (!isObject(declaration) || typeof declaration.name !== "string") return "functionDeclarations[]: name required";
      if (declaration.parameters !== undefined) {
        const problem = schemaProblem(declaration.parameters, "tools[0].function_declarations[0].parameters");
        if (problem) return problem;
      }
    }
  }
  return null;
}

/** What the real API would refuse in a countTokens body: `contents`, or a generateContentRequest naming the path's model. */
export function countBodyProblem(body: unknown, model: string): string | null {
  if (!isObject(body)) return "Invalid JSON payload received.";
  for (const key of Object.keys(body))
    if (key !== "contents" && key !== "generateContentRequest") return `Invalid JSON payload received. Unknown name "${key}": Cannot find field.`;
  if (body.generateContentRequest === undefined) return bodyProblem(body);
  if (body.contents !== undefined) return "* CountTokensRequest: contents and generateContentRequest are mutually exclusive";
  const inner = body.generateContentRequest;
  if (!isObject(inner)) return "generateContentRequest: bad shape";
  if (inner.model !== `models/${model}`) return `* CountTokensRequest.generate_content_request.model: must be models/${model}`;
  return bodyProblem(Object.fromEntries(Object.entries(inner).filter(([key]) => key !== "model")));
}

/** What the real API would refuse in a batchEmbedContents body for the path's model, or null. */
export function embedBodyProblem(body: unknown, model: string): string | null {
  if (!isObject(body)) return "Invalid JSON payload received.";
  for (const key of Object.keys(body)) if (key !== "requests") return `Invalid JSON payload received. Unknown name "${key}": Cannot find field.`;
  const requests = body.requests;
  if (!Array.isArray(requests) || requests.length === 0) return "* BatchEmbedContentsRequest.requests: requests is not specified";
  if (requests.length > 100) return "* BatchEmbedContentsRequest.requests: at most 100 requests can be in one batch";
  for (const [i, request] of requests.entries()) {
    if (!isObject(request)) return `requests[${i}]: not an object`;
    for (const key of Object.keys(request)) if (!EMBED_FIELDS.has(key)) return `Invalid JSON payload received. Unknown name "${key}" at 'requests[${i}]': Cannot find field.`;
    if (request.model !== `models/${model}`)
      return `* BatchEmbedContentsRequest.requests[${i}].model: The model in each request must match the model of the batch (models/${model}).`;
    const parts = isObject(request.content) ? request.content.parts : undefined;
    if (!Array.isArray(parts) || parts.length === 0) return `* BatchEmbedContentsRequest.requests[${i}].content.parts: contents.parts must not be empty.`;
    for (const part of parts) if (!isObject(part) || typeof part.text !== "string" || part.text === "" || Object.keys(part).length !== 1) return `requests[${i}]: text parts only`;
    const dims = request.outputDimensionality;
    if (dims !== undefined && !(typeof dims === "number" && Number.isInteger(dims) && dims > 0)) return `requests[${i}].outputDimensionality: must be a positive integer`;
    if (request.taskType !== undefined && !TASK_TYPES.has(String(request.taskType))) return `Invalid value at 'requests[${i}].task_type'`;
  }
  return null;
}

/** A batchEmbedContents answer: one ContentEmbedding per request, in order. */
export function geminiEmbeddings(vectors: number[][], extra: object = {}): object {
  return { embeddings: vectors.map((values) => ({ values })), ...extra };
}

export async function startGeminiMock(keys: readonly string[]): Promise<GeminiMock> {
  const mock: GeminiMock = {
    url: "",
    host: "",
    requests: [],
    answer: (_req, res) => geminiError(res, 500, "INTERNAL", "no answer set"),
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const path = req.url ?? "";
      const match = PATH.exec(path);
      if (req.method !== "POST" || !match) return geminiError(res, 404, "NOT_FOUND", `The requested URL ${path} was not found.`);
      const operation = match[2] as GeminiRecorded["operation"];
      const stream = operation === "streamGenerateContent";
      if (stream !== (match[3] !== undefined)) return geminiError(res, 400, "INVALID_ARGUMENT", "streamGenerateContent is sent with alt=sse here");
      const key = String(req.headers["x-goog-api-key"] ?? "");
      if (!keys.includes(key)) {
        return geminiError(res, 400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", {
          details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID", domain: "googleapis.com" }],
        });
      }
      if (req.headers.authorization !== undefined) return geminiError(res, 400, "INVALID_ARGUMENT", "Unexpected Authorization header next to the API key.");
      if (!String(req.headers["content-type"]).startsWith("application/json")) return geminiError(res, 400, "INVALID_ARGUMENT", "JSON body expected");
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        return geminiError(res, 400, "INVALID_ARGUMENT", "Invalid JSON payload received.");
      }
      const problem = operation === "batchEmbedContents" ? embedBodyProblem(body, match[1]!) : operation === "countTokens" ? countBodyProblem(body, match[1]!) : bodyProblem(body);
      if (problem) return geminiError(res, 400, "INVALID_ARGUMENT", problem);
      const recorded: GeminiRecorded = { path, operation, stream, model: match[1]!, key, headers: req.headers, body: body as Record<string, unknown> };
      mock.requests.push(recorded);
      Promise.resolve(mock.answer(recorded, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  mock.host = `127.0.0.1:${port}`;
  mock.url = `http://${mock.host}`;
  mock.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return mock;
}

export interface GeminiUsage {
  promptTokenCount: number;
  cachedContentTokenCount?: number;
  candidatesTokenCount?: number;
  thoughtsTokenCount?: number;
  totalTokenCount: number;
}

export type GeminiPart = { text: string; thought?: boolean } | { functionCall: { name: string; args: object }; thoughtSignature?: string };

/** A buffered generateContent answer. */
export function geminiResponse(parts: GeminiPart[], usage: GeminiUsage, finishReason = "STOP", extra: object = {}): object {
  return {
    candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }],
    usageMetadata: usage,
    modelVersion: "gemini-2.5-flash",
    responseId: "mockResp01",
    ...extra,
  };
}

/** A streamGenerateContent?alt=sse answer: one whole GenerateContentResponse per event, CRLF-delimited as Google sends them. */
export function geminiStream(res: ServerResponse, pieces: GeminiPart[][], usage: GeminiUsage, finishReason = "STOP", headers: Record<string, string> = {}): void {
  res.writeHead(200, { "content-type": "text/event-stream", ...headers });
  pieces.forEach((parts, i) => {
    const last = i === pieces.length - 1;
    const candidate = { content: { role: "model", parts }, index: 0, ...(last && { finishReason }) };
    const chunk = {
      candidates: [candidate],
      usageMetadata: last ? usage : { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount },
      modelVersion: "gemini-2.5-flash",
      responseId: "mockResp02",
    };
    res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`);
  });
  res.end();
}
