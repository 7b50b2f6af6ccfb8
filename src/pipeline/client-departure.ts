// A client that left before its request was answered. A connection can wait a long while before a
// process reads it (a queue in the cluster's primary, a busy worker); its client may have given up
// meanwhile, its complete request and its close then arriving together. Such a request is stopped
// before its body is read: nothing forwarded, nothing held, nothing charged; recorded as a 499.
import type { Socket } from "node:net";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { FastifyReply, FastifyRequest } from "fastify";
import { recordClientGone, type RequestRecorders } from "./request-context.js";

/**
 * The client can no longer receive an answer: its connection is closed, or it sent its FIN (Node's
 * HTTP server, not half-open, then ends its side: nothing written after it reaches the client).
 */
export function isClientGone(socket: Socket | null | undefined): boolean {
  return !socket || socket.destroyed || !socket.writable;
}

/**
 * For a billed route's onRequest, after authentication (the 499 then names its key). Waits one
 * event-loop turn first: the close that arrived with the request is read only after everything the
 * request started without waiting for I/O (SQLite's admission included) would have run, the
 * upstream request already sent. After this check, nothing waits before the body is read, which
 * Fastify would otherwise wait for forever from a connection that closed in between.
 */
export async function stopIfClientGone(request: FastifyRequest, reply: FastifyReply, recorders: RequestRecorders): Promise<void> {
  await nextTurn();
  if (!isClientGone(request.raw.socket)) return;
  recordClientGone(request, recorders);
  reply.hijack();
}
