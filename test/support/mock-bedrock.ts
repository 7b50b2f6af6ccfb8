// A Bedrock Runtime on 127.0.0.1 with a random port, strict the way AWS is: every request must carry
// a SigV4 signature (service bedrock) that the mock recomputes with the AWS SDK's signer from the
// test credentials it knows, else 403 as AWS answers. Paths are /model/{modelId}/converse and
// /model/{modelId}/converse-stream; streams are real binary AWS event streams, written in pieces
// cut at odd places (inside preludes too).
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Sha256 } from "@aws-crypto/sha256-js";
import { EventStreamCodec } from "@smithy/eventstream-codec";
import { SignatureV4 } from "@smithy/signature-v4";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";

export interface MockAwsCredential {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface BedrockRequest {
  operation: "converse" | "converse-stream";
  /** Decoded from the path. */
  modelId: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
  /** The access key id that signed it. */
  accessKeyId: string;
  region: string;
}

export type BedrockHandler = (req: BedrockRequest, res: ServerResponse) => void | Promise<void>;

export interface MockBedrock {
  url: string;
  host: string;
  requests: BedrockRequest[];
  /** Requests refused before the handler (bad signature, unknown key, bad path), with the reason. */
  refused: string[];
  handler: BedrockHandler;
  close(): Promise<void>;
}

export const REQUEST_ID = "7c2d4f1a-0b9e-4c3d-8e7f-1a2b3c4d5e6f";

const AUTHORIZATION = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;
const PATH = /^\/model\/([^/?]+)\/(converse|converse-stream)$/;

export async function startMockBedrock(credentials: readonly MockAwsCredential[]): Promise<MockBedrock> {
  const mock: MockBedrock = {
    url: "",
    host: "",
    requests: [],
    refused: [],
    handler: (_req, res) => awsError(res, 500, "InternalServerException", "no handler set"),
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const refuse = (status: number, type: string, message: string) => {
        mock.refused.push(`${type}: ${message}`);
        awsError(res, status, type, message);
      };
      void (async () => {
        const path = PATH.exec(req.url ?? "");
        if (req.method !== "POST" || !path) return refuse(404, "UnknownOperationException", `no operation at ${req.method} ${req.url}`);
        const auth = AUTHORIZATION.exec(String(req.headers.authorization ?? ""));
        if (!auth) return refuse(403, "MissingAuthenticationTokenException", "Missing Authentication Token");
        const [, accessKeyId, date, region, service, signedHeaders] = auth as unknown as string[];
        const credential = credentials.find((c) => c.accessKeyId === accessKeyId);
        if (!credential) return refuse(403, "UnrecognizedClientException", "The security token included in the request is invalid.");
        if (service !== "bedrock") return refuse(403, "InvalidSignatureException", `Credential should be scoped to correct service: 'bedrock'.`);
        if (req.headers["x-amz-security-token"] !== credential.sessionToken)
          return refuse(403, "UnrecognizedClientException", "The security token included in the request is invalid.");
        const amzDate = String(req.headers["x-amz-date"] ?? "");
        if (!amzDate.startsWith(date!)) return refuse(403, "InvalidSignatureException", "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP");
        if (!signedHeaders!.split(";").includes("host")) return refuse(403, "InvalidSignatureException", "host must be signed");
        if (!/^application\/json/.test(String(req.headers["content-type"]))) return refuse(400, "ValidationException", "content-type must be application/json");
        const expected = await expectedAuthorization(req.url!, req.headers, signedHeaders!.split(";"), body, region!, credential, amzDate);
        if (expected !== req.headers.authorization) {
          return refuse(403, "InvalidSignatureException", "The request signature we calculated does not match the signature you provided.");
        }
        let parsed: unknown;
        try {
          parsed = JSON.parse(body.toString("utf8"));
        } catch {
          return refuse(400, "ValidationException", "Malformed input request, please reformat your input and try again.");
        }
        const recorded: BedrockRequest = {
          operation: path[2] as BedrockRequest["operation"],
          modelId: decodeURIComponent(path[1]!),
          path: req.url!,
          headers: req.headers,
          body: parsed,
          accessKeyId: accessKeyId!,
          region: region!,
        };
        const shape = validateConverseBody(parsed);
        if (shape) return refuse(400, "ValidationException", shape);
        mock.requests.push(recorded);
        await mock.handler(recorded, res);
      })().catch(() => res.destroy());
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

/** The Authorization header the signer makes for this request over the headers it says it signed. */
async function expectedAuthorization(
  path: string,
  headers: IncomingHttpHeaders,
  signed: string[],
  body: Buffer,
  region: string,
  credentials: MockAwsCredential,
  amzDate: string,
): Promise<string> {
  const signer = new SignatureV4({ service: "bedrock", region, credentials, sha256: Sha256 });
  const signedHeaders: Record<string, string> = {};
  for (const name of signed) signedHeaders[name] = String(headers[name] ?? "");
  const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  const request = await signer.sign({ method: "POST", protocol: "http:", hostname: "127.0.0.1", path, query: {}, headers: signedHeaders, body }, { signingDate });
  return request.headers.authorization!;
}

/** The parts of the Converse request shape AWS validates before anything else. */
function validateConverseBody(body: unknown): string | null {
  if (!body || typeof body !== "object") return "The request body must be an object.";
  const request = body as Record<string, any>;
  if (!Array.isArray(request.messages) || request.messages.length === 0) return "messages: must be a non-empty list.";
  if ("model" in request || "modelId" in request) return "extraneous key [model] is not permitted";
  for (const message of request.messages) {
    if (message.role !== "user" && message.role !== "assistant") return "messages.role: must be user or assistant.";
    if (!Array.isArray(message.content) || message.content.length === 0) return "messages.content: must be a non-empty list.";
    for (const block of message.content) if (Object.keys(block).length !== 1) return "A content block must hold exactly one member.";
  }
  if (request.system !== undefined && !Array.isArray(request.system)) return "system: must be a list.";
  return null;
}

export function awsError(res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    "content-type": "application/json",
    "x-amzn-requestid": REQUEST_ID,
    "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    ...headers,
  });
  res.end(JSON.stringify({ message }));
}

export function converseJson(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { "content-type": "application/json", "x-amzn-requestid": REQUEST_ID });
  res.end(JSON.stringify(body));
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One event stream message as AWS frames it (payloads carry the "p" padding field as AWS's do). */
export function eventMessage(eventType: string, payload: Record<string, unknown>): Uint8Array {
  return codec.encode({
    headers: {
      ":event-type": { type: "string", value: eventType },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "event" },
    },
    body: fromUtf8(JSON.stringify({ ...payload, p: "abcdefghijklmnop" })),
  });
}

export function exceptionMessage(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ":exception-type": { type: "string", value: exceptionType },
      ":content-type": { type: "string", value: "application/json" },
      ":message-type": { type: "string", value: "exception" },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

/** Piece sizes that cut messages everywhere, preludes included. */
const PIECES = [1, 5, 11, 2, 29, 3, 64, 7];

/** Writes the messages as one stream, in pieces of odd sizes, each in its own turn of the event loop. */
export async function converseStream(res: ServerResponse, messages: Uint8Array[]): Promise<void> {
  res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": REQUEST_ID });
  const bytes = Buffer.concat(messages);
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = PIECES[i % PIECES.length]!;
    res.write(bytes.subarray(at, at + size));
    at += size;
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

/** The events of one ConverseStream answer: optional text, then tool uses, then stop and usage. */
export function converseEvents(options: {
  text?: string[];
  tools?: Array<{ id: string; name: string; input: string[] }>;
  stopReason: string;
  usage: Record<string, number>;
}): Uint8Array[] {
  const out = [eventMessage("messageStart", { role: "assistant" })];
  let index = 0;
  if (options.text) {
    for (const text of options.text) out.push(eventMessage("contentBlockDelta", { contentBlockIndex: index, delta: { text } }));
    out.push(eventMessage("contentBlockStop", { contentBlockIndex: index }));
    index += 1;
  }
  for (const tool of options.tools ?? []) {
    out.push(eventMessage("contentBlockStart", { contentBlockIndex: index, start: { toolUse: { toolUseId: tool.id, name: tool.name } } }));
    for (const input of tool.input) out.push(eventMessage("contentBlockDelta", { contentBlockIndex: index, delta: { toolUse: { input } } }));
    out.push(eventMessage("contentBlockStop", { contentBlockIndex: index }));
    index += 1;
  }
  out.push(eventMessage("messageStop", { stopReason: options.stopReason }));
  out.push(eventMessage("metadata", { usage: options.usage, metrics: { latencyMs: 321 } }));
  return out;
}
