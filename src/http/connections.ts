// Connection-level defences against slow or hostile clients: Node's timeouts and connection cap
// from config, refusals by Node's HTTP parser rendered through the error catalogue, and a
// "lingering close" for connections answered before their request body was read.
import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type Server, type ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { FastifyBaseLogger } from "fastify";
import type { ConnectionLimits } from "../config/load.js";
import { GatewayError, renderError } from "../errors/catalogue.js";

/** After an early answer, unread request bytes are read and dropped for at most this long ... */
const LINGER_MS = 2_000;
/** ... and at most this many, then the connection is cut. */
const LINGER_BYTES = 4 * 1024 * 1024;
/** Up to this much unread body Node may read and drop to reuse the connection after an early answer. */
const DRAIN_BYTES = 64 * 1024;
const DROP_LOG_INTERVAL_MS = 10_000;

/** Node's http.Server options for the timeouts (Fastify sets requestTimeout again itself). */
export function nodeServerOptions(limits: ConnectionLimits): ServerOptions {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Node checks the two timeouts every 30 s by default, which would let a 15 s limit run to 45 s.
    connectionsCheckingInterval: Math.min(1_000, Math.max(10, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

/**
 * This process's share of server.max_connections: the cap counts the whole `gateway serve`, and each
 * of its `workers` processes (which the primary hands connections in turn) takes an equal part.
 */
export function connectionShare(maxConnections: number, workers: number): number {
  return Math.max(1, Math.floor(maxConnections / Math.max(1, workers)));
}

/**
 * The cap on open connections (this process's share of it), with a warning (at most one per 10 s)
 * while it turns some away. Counted here rather than with Node's server.maxConnections: in a
 * cluster worker, Node hands a connection over the cap back to the primary, which queues it for
 * another worker and keeps it open, silent or not, past every timeout (a worker's headers timeout
 * closes only the connections it holds).
 */
export function capConnections(server: Server, limits: ConnectionLimits, log: FastifyBaseLogger, workers = 1): void {
  const share = connectionShare(limits.maxConnections, workers);
  let open = 0;
  let dropped = 0;
  let lastLoggedAt = 0;
  server.on("connection", (socket: Socket) => {
    if (open >= share) {
      socket.destroy();
      dropped += 1;
      const now = Date.now();
      if (now - lastLoggedAt < DROP_LOG_INTERVAL_MS) return;
      log.warn({ dropped, max_connections: limits.maxConnections, this_process: share }, "connections closed on arrival: server.max_connections reached");
      lastLoggedAt = now;
      dropped = 0;
      return;
    }
    open += 1;
    socket.once("close", () => (open -= 1));
  });
}

// Node closes a `Connection: close` response's socket with destroySoon(): end, then destroy as
// soon as the response is flushed. With request bytes still arriving, that destroy sends a TCP
// reset, which can make the client lose the response it has not read yet (a "broken pipe"
// instead of the 413). Replaced on such sockets by a lingering close.
type ClosingSocket = Socket & { destroySoon(): void };
const lingering = new WeakMap<Socket, number>();

function lingerThenDestroy(socket: Socket): void {
  if (socket.writable) socket.end();
  const deadline = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once("close", () => clearTimeout(deadline));
  socket.once("end", () => socket.destroy());
}

/** Cuts a lingering connection once it has sent more than LINGER_BYTES since the answer. */
function noteLingeringBytes(socket: Socket): void {
  const startedAt = lingering.get(socket);
  if (startedAt !== undefined && socket.bytesRead - startedAt > LINGER_BYTES) socket.destroy();
}

/**
 * For an answer given before the request body was read (401, 413, ...): `Connection: close`
 * instead of Node reading and discarding a body of any size to reuse the connection, and a
 * lingering close so the client can still read the answer. No body, or a small one, is left to
 * Node: the connection stays reusable.
 */
export function closeAfterEarlyAnswer(request: IncomingMessage, setHeader: (name: string, value: string) => void): void {
  if (request.complete) return;
  const chunked = request.headers["transfer-encoding"] !== undefined;
  if (!chunked && !(Number(request.headers["content-length"]) > DRAIN_BYTES)) return;
  const socket = request.socket;
  if (lingering.has(socket)) return;
  lingering.set(socket, socket.bytesRead);
  setHeader("connection", "close");
  request.on("data", () => noteLingeringBytes(socket));
  (socket as ClosingSocket).destroySoon = () => lingerThenDestroy(socket);
}

/** What each refusal of Node's HTTP parser becomes; the catalogue has no 408 or 431 of its own. */
function refusalFor(error: NodeJS.ErrnoException, limits: ConnectionLimits): GatewayError {
  switch (error.code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return new GatewayError(
        "invalid_request",
        `The request was not received in time: headers are allowed ${limits.headersTimeoutMs} ms, the whole request ${limits.requestTimeoutMs} ms.`,
        { code: "request_timeout" },
      );
    case "HPE_HEADER_OVERFLOW":
      return new GatewayError("payload_too_large", `The request headers exceed the size limit (${Math.round(maxHeaderSize / 1024)} KiB for the request line and all headers).`, {
        param: "headers",
        code: "headers_too_large",
      });
    case "HPE_INVALID_CONTENT_LENGTH":
    case "HPE_UNEXPECTED_CONTENT_LENGTH":
      return new GatewayError("invalid_request", "The Content-Length header is not a single valid length.", { param: "content-length" });
    case "HPE_INVALID_TRANSFER_ENCODING":
      return new GatewayError("invalid_request", "The Transfer-Encoding header is not valid: only chunked is accepted, and never together with Content-Length.", {
        param: "transfer-encoding",
      });
    default:
      return new GatewayError("invalid_request", `The request is not valid HTTP/1.1 (${error.code ?? "parse error"}).`);
  }
}

// Node's own check before answering a refusal: a response already under way on the socket.
type SocketWithResponse = Socket & { _httpMessage?: { headersSent: boolean } | null };

/**
 * Fastify's clientErrorHandler: a refusal from Node's parser (bad framing, oversized headers, a
 * timeout) answered in the catalogue's OpenAI shape with a fresh request id, `Connection: close`,
 * a lingering close, and one log line (no header values).
 */
export function clientErrorHandler(limits: ConnectionLimits, newRequestId: () => string, log: FastifyBaseLogger) {
  return (error: NodeJS.ErrnoException, socket: Socket): void => {
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    // The parser reports again for every chunk that follows a refusal.
    if (lingering.has(socket)) return noteLingeringBytes(socket);
    lingering.set(socket, socket.bytesRead);
    const refusal = refusalFor(error, limits);
    const requestId = newRequestId();
    log.info(
      { request_id: requestId, status: refusal.status, error: refusal.type, reason: error.code, remote_address: socket.remoteAddress },
      "request refused by the HTTP parser",
    );
    const answered = (socket as SocketWithResponse)._httpMessage?.headersSent === true;
    if (socket.writable && !answered) {
      const body = JSON.stringify(renderError(refusal, "openai", requestId));
      socket.write(
        `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
          `content-length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n${body}`,
      );
    }
    lingerThenDestroy(socket);
  };
}
