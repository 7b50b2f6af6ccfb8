// Upstream HTTP: one undici Agent with keep-alive pools per origin, shared by every request.
// Distinguishes "no HTTP response" (failover material) from an answer with a status.
import type { Readable } from "node:stream";
import { Agent, errors as undiciErrors, request } from "undici";
import type { Cancellation } from "../core/cancellation.js";

export interface UpstreamHttpRequest {
  url: string;
  method: "GET" | "POST" | "DELETE";
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Cancels the request: an AbortSignal, or the chat path's cheaper Cancellation. */
  signal: AbortSignal | Cancellation;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
}

export interface UpstreamHttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable & { text(): Promise<string>; dump(): Promise<void> };
}

/** The upstream gave no HTTP response: refused, DNS, reset, or a timeout before headers. */
export class NoResponseError extends Error {
  override name = "NoResponseError";
  constructor(readonly reason: string) {
    super(reason);
  }
}

export class ClientAbortedError extends Error {
  override name = "ClientAbortedError";
}

const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 256, connect: { timeout: 10_000 } });

export async function sendUpstream(req: UpstreamHttpRequest): Promise<UpstreamHttpResponse> {
  try {
    const response = await request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
      dispatcher: agent,
      headersTimeout: req.headersTimeoutMs,
      bodyTimeout: req.bodyTimeoutMs,
    });
    return { status: response.statusCode, headers: response.headers, body: response.body as UpstreamHttpResponse["body"] };
  } catch (error) {
    if (req.signal.aborted) throw new ClientAbortedError("the client went away");
    throw new NoResponseError(describeNetworkError(error));
  }
}

function describeNetworkError(error: unknown): string {
  if (error instanceof undiciErrors.HeadersTimeoutError) return "timeout before headers";
  if (error instanceof undiciErrors.ConnectTimeoutError) return "connect timeout";
  const code = (error as { code?: string; cause?: { code?: string } })?.cause?.code ?? (error as { code?: string })?.code;
  return code ? code.toLowerCase() : "network error";
}

export async function closeUpstreamAgent(): Promise<void> {
  await agent.close();
}
