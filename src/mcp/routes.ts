// POST, GET and DELETE /mcp: the MCP streamable HTTP endpoint (protocol revision of the SDK, with
// Mcp-Session-Id sessions, valid in every worker and process on the database: gateway.ts). Each HTTP request is authenticated with the gateway key (Bearer or
// x-api-key; a revoked key or a suspended account is refused) and its key's standing read afresh;
// the session's handlers then see that principal, so an allowlist change applies to the next call.
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { GatewayError } from "../errors/catalogue.js";
import type { RouteContext } from "../http/route-context.js";
import { authenticate } from "../pipeline/authenticate.js";
import { McpSessionsStore } from "../store/mcp-sessions-store.js";
import { McpGateway, type McpSession } from "./gateway.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The MCP gateway behind /mcp (its sessions and upstream servers). */
    mcpGateway: McpGateway;
  }
}

/** How often a process looks for a reloaded `mcp` section (each /mcp request looks too). */
const SYNC_MS = 1_000;

export function registerMcpRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const gateway = new McpGateway(
    () => ctx.config.mcp,
    () => ({ billing: ctx.billing, requestLog: ctx.pipeline.requestLog, config: ctx.config }),
    new McpSessionsStore(ctx.store.db, ctx.store.dialect),
    ctx.logger,
  );
  app.decorate("mcpGateway", gateway);
  app.addHook("onReady", async () => gateway.sync());
  const sync = setInterval(() => gateway.sync(), SYNC_MS);
  sync.unref();
  // Before the listener closes: the sessions' open GET streams end, so the close does not wait on them.
  app.addHook("preClose", async () => {
    clearInterval(sync);
    await gateway.close();
  });

  const handle = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const principal = await authenticate(request, ctx.pipeline.authCache, "exact");
    gateway.sync();
    const session = await sessionFor(gateway, request, principal);
    session.principal = principal;
    await gateway.used(session);
    // The body is Fastify's, parsed within the body limit: the transport is handed it, never the stream.
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) if (typeof value === "string") headers.set(name, value);
    const webRequest = new Request(`http://gateway${request.url}`, { method: request.method, headers });
    const response = await session.transport.handleRequest(webRequest, { parsedBody: request.body });
    if (request.method === "DELETE" && response.status === 200) await gateway.deleted(session);
    await sendWebResponse(request, reply, response);
  };
  app.post("/mcp", handle);
  app.get("/mcp", handle);
  app.delete("/mcp", handle);
}

/** Writes the transport's answer (JSON, or an SSE stream until it ends or the client leaves). */
async function sendWebResponse(request: FastifyRequest, reply: FastifyReply, response: Response): Promise<void> {
  reply.hijack();
  const raw = reply.raw;
  const headers: Record<string, string> = { "x-request-id": request.id };
  response.headers.forEach((value, name) => (headers[name] = value));
  raw.writeHead(response.status, headers);
  if (response.body === null) {
    raw.end();
    return;
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  raw.once("close", () => void reader.cancel().catch(() => undefined));
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!raw.write(value)) await new Promise((resolve) => raw.once("drain", resolve).once("close", resolve));
      if (raw.destroyed) break;
    }
  } catch {
    // The stream was cancelled (the client left) or failed: nothing more to send.
  }
  raw.end();
}

async function sessionFor(gateway: McpGateway, request: FastifyRequest, principal: McpSession["principal"]): Promise<McpSession> {
  const id = request.headers["mcp-session-id"];
  if (typeof id === "string" && id.length > 0) {
    const session = await gateway.find(id, principal);
    if (session === null) {
      throw new GatewayError("not_found", "No MCP session with this Mcp-Session-Id for this key: it expired or was closed. Send an initialize request to open a new one.", {
        code: "mcp_session_not_found",
      });
    }
    return session;
  }
  if (request.method === "POST" && isInitializeRequest(request.body)) return gateway.open(principal, request.body.params);
  throw new GatewayError("invalid_request", "Send the Mcp-Session-Id header of your MCP session, or an initialize request (POST) to open one.", { code: "mcp_session_required" });
}
