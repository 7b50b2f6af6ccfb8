// A mock Azure OpenAI resource on 127.0.0.1 (random port) that checks requests the way Azure does
// before answering: the api-key header (401 otherwise, no Bearer), the path of one of the two API
// forms (deployments + dated api-version, or /openai/v1 with the deployment as the body's model),
// a known deployment (404 DeploymentNotFound) and the body's shape (400), embeddings included. It answers in Azure's
// documented format: OpenAI's bodies plus prompt_filter_results and content_filter_results, a stream
// that opens with a prompt-filter chunk (id "", no choices), and request-id headers on every answer.
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export type AzureOperation = "chat/completions" | "responses" | "images/generations" | "embeddings";

export interface AzureRequest {
  form: "deployments" | "v1";
  operation: AzureOperation;
  /** The deployment addressed: from the path (deployments form) or the body's model. */
  deployment: string;
  apiVersion: string | null;
  path: string;
  key: string;
  headers: IncomingMessage["headers"];
  body: any;
}

/** What the next chat answer holds (the mock shapes it buffered or streamed as the request asks). */
export interface ChatReply {
  text?: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  finish?: "stop" | "length" | "tool_calls" | "content_filter";
  usage?: { prompt_tokens: number; completion_tokens: number; cached_tokens?: number };
}

export type AzureHandler = (req: AzureRequest, res: ServerResponse) => void | Promise<void>;

export interface MockAzure {
  url: string;
  host: string;
  keys: Set<string>;
  deployments: Set<string>;
  requests: AzureRequest[];
  /** Headers added to every answer (Azure's request ids by default; tests plant canaries here). */
  responseHeaders: Record<string, string>;
  handler: AzureHandler;
  close(): Promise<void>;
}

const SAFE = {
  hate: { filtered: false, severity: "safe" },
  self_harm: { filtered: false, severity: "safe" },
  sexual: { filtered: false, severity: "safe" },
  violence: { filtered: false, severity: "safe" },
};
const FILTERED = { ...SAFE, violence: { filtered: true, severity: "high" } };
const API_VERSION = /^\d{4}-\d{2}-\d{2}(-preview)?$/;
const DEPLOYMENT_PATH = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|images\/generations|embeddings)$/;
const V1_PATH = /^\/openai\/v1\/(chat\/completions|responses|images\/generations|embeddings)$/;
const EMBEDDING_FIELDS = new Set(["model", "input", "user", "encoding_format", "dimensions", "input_type"]);

export function azureHeaders(): Record<string, string> {
  return {
    "apim-request-id": randomUUID(),
    "x-ms-request-id": randomUUID(),
    "x-ms-client-request-id": randomUUID(),
    "x-request-id": randomUUID(),
    "x-ms-region": "Sweden Central",
    "azureml-model-session": "d089-20251013194711",
  };
}

export function azureError(res: ServerResponse, status: number, code: string, message: string, extra: object = {}, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ error: { code, message, param: null, type: null, ...extra } }));
}

export async function startMockAzure(options: { keys: string[]; deployments: string[] }): Promise<MockAzure> {
  const mock: MockAzure = {
    url: "",
    host: "",
    keys: new Set(options.keys),
    deployments: new Set(options.deployments),
    requests: [],
    responseHeaders: azureHeaders(),
    handler: (req, res) => answerChat(req, res, { text: "Hello from Azure." }),
    close: async () => undefined,
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      for (const [name, value] of Object.entries(mock.responseHeaders)) res.setHeader(name, value);
      const url = new URL(req.url ?? "/", "http://azure.invalid");
      const key = String(req.headers["api-key"] ?? "");
      if (req.headers.authorization !== undefined || !mock.keys.has(key)) {
        azureError(res, 401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription.");
        return;
      }
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        azureError(res, 400, "BadRequest", "The request body is not valid JSON.");
        return;
      }
      const apiVersion = url.searchParams.get("api-version");
      const deploymentMatch = DEPLOYMENT_PATH.exec(url.pathname);
      const v1Match = V1_PATH.exec(url.pathname);
      let recorded: AzureRequest;
      if (deploymentMatch || url.pathname === "/openai/responses") {
        // Dated API: every request carries a valid api-version.
        if (apiVersion === null || !API_VERSION.test(apiVersion)) {
          azureError(res, 404, "404", "Resource not found");
          return;
        }
        const operation = (deploymentMatch ? deploymentMatch[2] : "responses") as AzureOperation;
        const deployment = deploymentMatch ? decodeURIComponent(deploymentMatch[1]!) : String(body.model);
        recorded = { form: "deployments", operation, deployment, apiVersion, path: url.pathname, key, headers: req.headers, body };
      } else if (v1Match) {
        if (apiVersion !== null && apiVersion !== "preview") {
          azureError(res, 400, "BadRequest", `API version not supported: ${apiVersion}`);
          return;
        }
        recorded = { form: "v1", operation: v1Match[1] as AzureOperation, deployment: String(body.model), apiVersion, path: url.pathname, key, headers: req.headers, body };
      } else {
        azureError(res, 404, "404", "Resource not found");
        return;
      }
      if (!mock.deployments.has(recorded.deployment)) {
        azureError(
          res,
          404,
          "DeploymentNotFound",
          "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.",
        );
        return;
      }
      const shapeError = checkShape(recorded);
      if (shapeError) {
        azureError(res, 400, "BadRequest", shapeError);
        return;
      }
      mock.requests.push(recorded);
      Promise.resolve(mock.handler(recorded, res)).catch(() => res.destroy());
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

function checkShape(req: AzureRequest): string | null {
  const body = req.body;
  if (!body || typeof body !== "object") return "The request body must be a JSON object.";
  if (req.form === "v1" && typeof body.model !== "string") return "'model' is a required property.";
  if (req.operation === "chat/completions") {
    if (!Array.isArray(body.messages) || body.messages.length === 0) return "'messages' is a required property.";
    if (!body.messages.every((m: any) => m && typeof m.role === "string")) return "Each message needs a role.";
    if (body.stream_options !== undefined && body.stream !== true) return "The 'stream_options' parameter is only allowed when 'stream' is enabled.";
  }
  if (req.operation === "responses" && body.input === undefined) return "'input' is a required property.";
  if (req.operation === "images/generations" && typeof body.prompt !== "string") return "'prompt' is a required property.";
  if (req.operation === "embeddings") return embeddingsShape(body);
  return null;
}

/** Azure's Embeddings API: OpenAI's fields and input forms, at most 2,048 inputs. */
function embeddingsShape(body: any): string | null {
  for (const key of Object.keys(body)) if (!EMBEDDING_FIELDS.has(key)) return `Unrecognized request argument supplied: ${key}`;
  const input = body.input;
  const isTokens = (v: unknown) => Array.isArray(v) && v.length > 0 && v.every((t) => Number.isInteger(t) && t >= 0);
  const valid =
    (typeof input === "string" && input !== "") ||
    (Array.isArray(input) && input.length > 0 && input.length <= 2048 && (input.every((v) => typeof v === "string" && v !== "") || isTokens(input) || input.every(isTokens)));
  if (!valid) return "'input' is invalid: a non-empty string or array of at most 2048 inputs.";
  if (body.encoding_format !== undefined && body.encoding_format !== "float" && body.encoding_format !== "base64") return "'encoding_format' must be 'float' or 'base64'.";
  if (body.dimensions !== undefined && !(Number.isInteger(body.dimensions) && body.dimensions > 0)) return "'dimensions' must be a positive integer.";
  return null;
}

/** An Embeddings API answer as Azure sends it: OpenAI's list, base64 when asked, with usage. */
export function answerEmbeddings(req: AzureRequest, res: ServerResponse, vectors: number[][], promptTokens = 1234): void {
  const base64 = req.body.encoding_format === "base64";
  const data = vectors.map((v, index) => ({ object: "embedding", index, embedding: base64 ? Buffer.from(new Float32Array(v).buffer).toString("base64") : v }));
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ object: "list", data, model: "text-embedding-3-small", usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } }));
}

function azureUsage(usage: Required<ChatReply>["usage"]) {
  return {
    completion_tokens: usage.completion_tokens,
    completion_tokens_details: { accepted_prediction_tokens: 0, audio_tokens: 0, reasoning_tokens: 0, rejected_prediction_tokens: 0 },
    prompt_tokens: usage.prompt_tokens,
    prompt_tokens_details: { audio_tokens: 0, cached_tokens: usage.cached_tokens ?? 0 },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
}

const PROMPT_FILTER_RESULTS = [{ prompt_index: 0, content_filter_results: { ...SAFE, jailbreak: { filtered: false, detected: false } } }];

/** A Chat answer in Azure's format, buffered or streamed as the request asks. */
export async function answerChat(req: AzureRequest, res: ServerResponse, reply: ChatReply): Promise<void> {
  const finish = reply.finish ?? (reply.toolCalls ? "tool_calls" : "stop");
  const usage = azureUsage(reply.usage ?? { prompt_tokens: 20, completion_tokens: 5 });
  const filter = finish === "content_filter" ? FILTERED : SAFE;
  const toolCalls = reply.toolCalls?.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } }));
  const base = { created: 1_760_000_000, id: "chatcmpl-AZmock1", model: "gpt-4o-2024-11-20", system_fingerprint: "fp_az1" };
  if (req.body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        ...base,
        object: "chat.completion",
        choices: [
          {
            content_filter_results: filter,
            finish_reason: finish,
            index: 0,
            logprobs: null,
            message: { content: reply.text ?? null, refusal: null, role: "assistant", ...(toolCalls && { tool_calls: toolCalls }) },
          },
        ],
        prompt_filter_results: PROMPT_FILTER_RESULTS,
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  const send = (data: object) => res.write(`data: ${JSON.stringify(data)}\n\n`);
  const chunk = (delta: object, finishReason: string | null, results: object = SAFE) =>
    send({ ...base, object: "chat.completion.chunk", choices: [{ content_filter_results: results, delta, finish_reason: finishReason, index: 0, logprobs: null }] });
  send({ choices: [], created: 0, id: "", model: "", object: "", prompt_filter_results: PROMPT_FILTER_RESULTS });
  chunk({ content: "", refusal: null, role: "assistant" }, null, {});
  for (const word of (reply.text ?? "").match(/\S+\s*/g) ?? []) chunk({ content: word }, null);
  toolCalls?.forEach((call, index) => {
    chunk({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }] }, null, {});
    chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] }, null, {});
  });
  chunk({}, finish, finish === "content_filter" ? FILTERED : {});
  if (req.body.stream_options?.include_usage) send({ ...base, object: "chat.completion.chunk", choices: [], usage });
  res.end("data: [DONE]\n\n");
}

/** A Responses answer (pass-through), buffered or streamed. */
export function answerResponses(req: AzureRequest, res: ServerResponse, text: string, usage = { input_tokens: 30, output_tokens: 7, cached_tokens: 10 }): void {
  const response = {
    id: "resp_AZmock1",
    object: "response",
    created_at: 1_760_000_000,
    status: "completed",
    model: req.deployment,
    output: [{ id: "msg_AZ1", type: "message", status: "completed", role: "assistant", content: [{ type: "output_text", text, annotations: [] }] }],
    usage: {
      input_tokens: usage.input_tokens,
      input_tokens_details: { cached_tokens: usage.cached_tokens },
      output_tokens: usage.output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: usage.input_tokens + usage.output_tokens,
    },
  };
  if (req.body.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(response));
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream" });
  let sequence = 0;
  const send = (type: string, data: object) => res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  const open = { ...response, status: "in_progress", output: [], usage: null };
  send("response.created", { response: open });
  send("response.output_item.added", { output_index: 0, item: { id: "msg_AZ1", type: "message", status: "in_progress", role: "assistant", content: [] } });
  send("response.content_part.added", { item_id: "msg_AZ1", output_index: 0, content_index: 0, part: { type: "output_text", text: "", annotations: [] } });
  send("response.output_text.delta", { item_id: "msg_AZ1", output_index: 0, content_index: 0, delta: text });
  send("response.output_text.done", { item_id: "msg_AZ1", output_index: 0, content_index: 0, text });
  send("response.content_part.done", { item_id: "msg_AZ1", output_index: 0, content_index: 0, part: { type: "output_text", text, annotations: [] } });
  send("response.output_item.done", { output_index: 0, item: response.output[0] });
  send("response.completed", { response });
  res.end();
}

/** An Images API answer with Azure's per-image content filter results. */
export function answerImages(req: AzureRequest, res: ServerResponse): void {
  const n = typeof req.body.n === "number" ? req.body.n : 1;
  const data = Array.from({ length: n }, () => ({ b64_json: "iVBORw0KGgo=", content_filter_results: SAFE, prompt_filter_results: SAFE, revised_prompt: null }));
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ created: 1_760_000_000, data }));
}
