// A client that left before its request was answered. A connection can wait a long while before a
// process reads it (a queue in the cluster's primary, a busy worker); its client may have given up
// meanwhile, its complete request and its close then arriving together. Such a request is stopped
// before its body is read: nothing forwarded, nothing held, nothing charged; recorded as a 499.
import type { Socket } from "node:net";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Cancellation } from "../core/cancellation.js";
import { recordClientGone, type RequestRecorders } from "./request-context.js";

/**
 * The client can no longer receive an answer: its connection is closed, or it sent its FIN (Node's
 * HTTP server, not half-open, then ends its side: nothing written after it reaches the client).
 */
export function isClientGone(socket: Socket | null | undefined): boolean {
  return !socket || socket.destroyed || !socket.writable;
}

/**
 * Resolves in the check phase after the next poll phase: a read that did not fill libuv's buffer
 * ends the socket's reads for that poll, so a FIN that came with the request is read at the next.
 */
function afterNextPoll(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/**
 * For a billed route's onRequest, after authentication (the 499 then names its key). Without the
 * wait, everything the request starts without I/O (SQLite's admission included) would run before
 * the close is read, the upstream request sent; it costs about 2 µs of CPU. After this check nothing
 * waits before the body is read, which Fastify would otherwise wait for forever on a connection
 * closed in between.
 */
export async function stopIfClientGone(request: FastifyRequest, reply: FastifyReply, recorders: RequestRecorders): Promise<void> {
  await afterNextPoll();
  if (!isClientGone(request.raw.socket)) return;
  recordClientGone(request, recorders);
  reply.hijack();
}

/**
 * Aborted when the response closes unfinished; `aborted` also as soon as the client is gone, read
 * from its connection when asked: a FIN closes the response only once Node has ended its side too.
 */
class ClientCancellation extends Cancellation {
  readonly #socket: Socket;

  constructor(socket: Socket) {
    super();
    this.#socket = socket;
  }

  override get aborted(): boolean {
    return super.aborted || isClientGone(this.#socket);
  }
}

/** Aborted when the client closes the connection before its response finished, at once when it already has. */
export function cancelOnClientClose(reply: FastifyReply): Cancellation {
  const cancellation = new ClientCancellation(reply.request.raw.socket);
  if (cancellation.aborted) {
    cancellation.abort();
    return cancellation;
  }
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) cancellation.abort();
  });
  return cancellation;
}
