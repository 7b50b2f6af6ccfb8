// The one place errors become HTTP responses: GatewayError as is, Fastify's own errors mapped to
// catalogue types, and anything else as a generic internal_error (never the original message).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ERROR_CATALOGUE, GatewayError, loggableMessage, renderError } from "../errors/catalogue.js";
import { isDatabaseUnreachable } from "../store/db-errors.js";
import { closeAfterEarlyAnswer } from "./connections.js";

function fromFastifyError(error: FastifyError): GatewayError | null {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new GatewayError("payload_too_large");
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return invalidJson(error.message);
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new GatewayError("invalid_request", "The body is empty: send a JSON object.", { param: "body" });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new GatewayError("invalid_request", "send the body as application/json", { param: "content-type" });
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new GatewayError("invalid_request", "the Content-Length header does not match the body", { param: "content-length" });
    default:
      break;
  }
  if (error instanceof SyntaxError) return invalidJson(error.message);
  if (error.validation) return new GatewayError("invalid_request", error.message);
  return null;
}

/** The parser's message quotes the body (V8 shows the text around the fault): the client sees it, the request log does not. */
function invalidJson(parserMessage: string): GatewayError {
  return new GatewayError("invalid_request", `the body is not valid JSON: ${parserMessage}`, { param: "body", logMessage: "the body is not valid JSON" });
}

/** The database is down, restarting or cut off: a refusal the client may retry, not a defect of the gateway. */
export function databaseUnavailable(): GatewayError {
  return new GatewayError("service_unavailable", ERROR_CATALOGUE.service_unavailable.message, { code: "database_unavailable", headers: { "retry-after": "1" } });
}

export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error && typeof error === "object" && "code" in error) {
    const mapped = fromFastifyError(error as FastifyError);
    if (mapped) return mapped;
  }
  if (isDatabaseUnreachable(error)) return databaseUnavailable();
  return new GatewayError("internal_error", ERROR_CATALOGUE.internal_error.message);
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: GatewayError): FastifyReply {
  request.meter.errorType = error.type;
  request.meter.errorMessage = loggableMessage(error);
  closeAfterEarlyAnswer(request.raw, (name, value) => {
    reply.header(name, value);
  });
  for (const [name, value] of Object.entries(error.details.headers ?? {})) reply.header(name, value);
  return reply
    .code(error.status)
    .header("content-type", "application/json; charset=utf-8")
    .send(renderError(error, request.errorShape, request.id));
}

/** Node's IncomingMessage fails with ECONNRESET ("aborted") when its connection closes mid-body. */
function isClientAbort(error: unknown, request: FastifyRequest): boolean {
  return !request.raw.complete && typeof error === "object" && error !== null && (error as { code?: unknown }).code === "ECONNRESET";
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    if (isClientAbort(error, request)) {
      // The client went away mid-upload: nothing to answer and nothing wrong with the gateway.
      request.log.info({ method: request.method, path: request.url.split("?")[0], key: request.meter.keyId }, "connection closed before the request body was complete");
      return;
    }
    const gatewayError = toGatewayError(error);
    if (gatewayError.type === "internal_error") request.log.error({ err: error }, "unhandled error");
    if (reply.sent || reply.raw.headersSent) {
      // A stream already under way: the pipeline reports in-band; just make sure the socket ends.
      reply.raw.end();
      return;
    }
    return sendError(request, reply, gatewayError);
  });
  app.setNotFoundHandler((request, reply) => sendError(request, reply, new GatewayError("not_found", `no route ${request.method} ${request.url.split("?")[0]}`)));
}
