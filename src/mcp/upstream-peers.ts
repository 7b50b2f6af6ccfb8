// Which client a server-to-client message of an upstream MCP server belongs to. The gateway has one
// connection per configured server, shared by every session, so a sampling, elicitation or roots
// request (and a logging message) the server sends while handling a call must be matched to the
// call's client. Each forwarded call is registered here under an id that travels in the call's
// `_meta`; the match is then:
// - HTTP: exact. The server sends such messages on the SSE stream answering the call's POST; the
//   transport's fetch is wrapped so that every message on that stream carries the call's id.
// - stdio: the protocol has nothing to match on; the message belongs to the server's one call in
//   flight, and to none when there are several (the server is told so, an MCP error).
// A message matched to no call: a request is refused with an MCP error, a logging message dropped.
import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { AnySchema, SchemaOutput } from "@modelcontextprotocol/sdk/server/zod-compat.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  CreateMessageRequestSchema,
  CreateMessageResultSchema,
  ElicitRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  ListRootsRequestSchema,
  ListRootsResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ProgressNotificationSchema,
  type Progress,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";

/** Where a forwarded call's id travels in its `_meta` (and in the messages matched to it). */
export const CALL_META = "io.model-gateway/call";

/** What the gateway declares to upstream servers: it forwards these requests to the calling client. */
export const UPSTREAM_CLIENT_CAPABILITIES = { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} };

/** The client end of a forwarded call: where the server's messages for that call go. */
export interface CallPeer {
  /** A request of the server's (sampling, elicitation, roots) to the calling client; rejects with an McpError. */
  request<S extends AnySchema>(request: ServerRequest, resultSchema: S, signal: AbortSignal): Promise<SchemaOutput<S>>;
  /** A notification of the server's for the call (a logging message). */
  notify(notification: ServerNotification): Promise<void>;
  /** The server's progress on the call; null when the client asked for none. */
  progress: ((progress: Progress) => void) | null;
}

export class CallPeers {
  readonly #calls = new Map<string, CallPeer>();

  constructor(private readonly transport: "stdio" | "http") {}

  /**
   * Runs `call` with `peer` registered; `meta` goes into the forwarded request's `_meta`: the call's
   * id, which is also its progress token when the client asked for progress.
   */
  async run<T>(peer: CallPeer, call: (meta: Record<string, string>) => Promise<T>): Promise<T> {
    const id = randomUUID();
    this.#calls.set(id, peer);
    try {
      return await call({ [CALL_META]: id, ...(peer.progress !== null && { progressToken: id }) });
    } finally {
      this.#calls.delete(id);
    }
  }

  /** The peer a message with this `_meta` belongs to, or null (see the file's comment). */
  peerOf(meta: unknown): CallPeer | null {
    const id = (meta as Record<string, unknown> | undefined)?.[CALL_META];
    if (typeof id === "string") return this.#calls.get(id) ?? null;
    if (this.transport === "stdio" && this.#calls.size === 1) return [...this.#calls.values()][0]!;
    return null;
  }

  /** Sets the client's handlers for the server's requests and logging messages. */
  install(client: Client, serverName: string): void {
    const relay = async <S extends AnySchema>(request: ServerRequest, schema: S, signal: AbortSignal): Promise<SchemaOutput<S>> => {
      const peer = this.peerOf(request.params?._meta);
      if (peer === null) {
        const why =
          this.transport === "stdio" && this.#calls.size > 1
            ? "several of its calls are in progress over stdio and the request does not say which it belongs to"
            : "it was not made while handling a client's call";
        throw new McpError(ErrorCode.InvalidRequest, `The gateway cannot forward ${request.method} from MCP server ${serverName} to a client: ${why}.`);
      }
      return peer.request(withoutCallMeta(request), schema, signal);
    };
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => relay(request, CreateMessageResultSchema, extra.signal));
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => relay(request, ElicitResultSchema, extra.signal));
    client.setRequestHandler(ListRootsRequestSchema, (request, extra) => relay(request, ListRootsResultSchema, extra.signal));
    // Replaces the SDK's own progress handling (RequestOptions.onprogress), which forgets a call's
    // handler when its response arrives and so drops a progress sent just before the result.
    client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
      const { progressToken, ...progress } = withoutCallMeta(notification).params;
      this.#calls.get(String(progressToken))?.progress?.(progress);
    });
    client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
      await this.peerOf(notification.params._meta)
        ?.notify(withoutCallMeta(notification))
        .catch(() => undefined);
    });
  }
}

/** The message without the gateway's call id (the client has no use for it). */
export function withoutCallMeta<M extends { params?: { _meta?: Record<string, unknown> } & Record<string, unknown> }>(message: M): M {
  const meta = message.params?._meta;
  if (meta === undefined || !(CALL_META in meta)) return message;
  const rest = { ...meta };
  delete rest[CALL_META];
  return { ...message, params: { ...message.params, _meta: rest } };
}

/** A fetch that marks every message on the SSE stream answering a call's POST with that call's id. */
export function callTaggingFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    const callId = callIdOf(init?.body);
    if (callId === null || response.body === null || !(response.headers.get("content-type") ?? "").includes("text/event-stream")) return response;
    return new Response(response.body.pipeThrough(tagEvents(callId)), { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function callIdOf(body: unknown): string | null {
  if (typeof body !== "string" || !body.includes(CALL_META)) return null;
  try {
    const id = (JSON.parse(body) as { params?: { _meta?: Record<string, unknown> } }).params?._meta?.[CALL_META];
    return typeof id === "string" ? id : null;
  } catch {
    return null;
  }
}

/** Rewrites each SSE `data:` line holding a request or notification so its `_meta` carries the call id. */
function tagEvents(callId: string): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  const tagLine = (line: string): string => {
    if (!line.startsWith("data:")) return line;
    try {
      const message = JSON.parse(line.slice(5)) as { method?: unknown; params?: Record<string, unknown> };
      if (typeof message !== "object" || message === null || typeof message.method !== "string") return line;
      const params = message.params ?? {};
      const meta = (params._meta as Record<string, unknown> | undefined) ?? {};
      return `data: ${JSON.stringify({ ...message, params: { ...params, _meta: { ...meta, [CALL_META]: callId } } })}`;
    } catch {
      return line;
    }
  };
  return new TransformStream({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      const end = pending.lastIndexOf("\n");
      if (end < 0) return;
      const complete = pending.slice(0, end + 1);
      pending = pending.slice(end + 1);
      controller.enqueue(encoder.encode(complete.split("\n").map(tagLine).join("\n")));
    },
    flush(controller) {
      pending += decoder.decode();
      if (pending.length > 0) controller.enqueue(encoder.encode(tagLine(pending)));
    },
  });
}
