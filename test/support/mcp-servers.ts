// MCP servers for the MCP gateway's tests: a streamable HTTP server made with the SDK on 127.0.0.1
// (a random port), whose URL path, required header and error messages carry a canary, and the
// path of the official "everything" server, which the gateway starts over stdio.
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

export const EVERYTHING_SERVER = resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");

export interface HttpMcpServer {
  /** The URL the gateway is configured with (its path holds the canary). */
  url: string;
  /** The bearer token the server requires (holds the canary). */
  token: string;
  /** Tool calls seen, by tool name, with their arguments. */
  calls: Array<{ tool: string; args: unknown }>;
  close(): Promise<void>;
}

/** A stateless streamable HTTP MCP server: tools add, fail (a JSON-RPC error), broken (an isError result); prompt greet; resource notes://one. */
export async function startHttpMcpServer(canary: string): Promise<HttpMcpServer> {
  const calls: HttpMcpServer["calls"] = [];
  const token = `tok-${canary}`;
  const path = `/mcp-${canary}`;
  // The low-level Server: a tool's thrown McpError is a JSON-RPC error (McpServer would turn it into an isError result).
  const build = () => {
    const server = new Server({ name: `server-at-${canary}`, version: "1" }, { capabilities: { tools: {}, prompts: {}, resources: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [
        { name: "add", description: "Adds two numbers", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] } },
        { name: "fail", description: "Always fails with a JSON-RPC error", inputSchema: { type: "object" } },
        { name: "broken", description: "Answers with an error result", inputSchema: { type: "object" } },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      const { name, arguments: args = {} } = request.params;
      calls.push({ tool: name, args });
      if (name === "add") return { content: [{ type: "text", text: String(Number(args.a) + Number(args.b)) }] };
      if (name === "broken") return { isError: true, content: [{ type: "text", text: `the tool could not do it with ${token}` }] };
      throw new McpError(ErrorCode.InternalError, `database at ${canary}.internal refused the query`);
    });
    server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [{ name: "greet", description: "A greeting", arguments: [{ name: "who", required: true }] }] }));
    server.setRequestHandler(GetPromptRequestSchema, (request) => ({
      messages: [{ role: "user", content: { type: "text", text: `Say hello to ${request.params.arguments?.who ?? "nobody"}.` } }],
    }));
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: "notes://one", name: "one", mimeType: "text/plain" }] }));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => ({ contents: [{ uri: request.params.uri, text: "note one" }] }));
    return server;
  };
  const http: HttpServer = createServer((req, res) => {
    if (!req.url?.startsWith(path)) {
      res.writeHead(404).end(`no such path; try ${path}`);
      return;
    }
    if (req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401, { "content-type": "application/json" }).end(JSON.stringify({ error: `bad token for ${canary}` }));
      return;
    }
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => void server.close());
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    token,
    calls,
    close: () =>
      new Promise<void>((done) => {
        http.closeAllConnections();
        http.close(() => done());
      }),
  };
}
