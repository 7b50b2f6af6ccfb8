// A stateful streamable HTTP MCP server made with the SDK, on 127.0.0.1 (a random port), for the
// gateway's forwarding tests: resource subscriptions, completions, and tools that make requests of
// the client while they run (sampling, elicitation, roots) and send progress and logging for the
// call. Its URL path and required header carry a canary, and so does what it logs.
import { randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListRootsResultSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

export interface DeskMcpServer {
  url: string;
  token: string;
  /** The URIs subscribed now (by the gateway's connection), in order of subscription. */
  subscribed: Set<string>;
  /** Every subscribe and unsubscribe the server received. */
  subscriptionLog: string[];
  close(): Promise<void>;
}

const NAMES = ["Ada", "Alan", "Grace"];
const DOCS = ["alpha", "beta"];

export async function startDeskMcpServer(canary: string): Promise<DeskMcpServer> {
  const token = `desk-${canary}`;
  const path = `/desk-${canary}`;
  const subscribed = new Set<string>();
  const subscriptionLog: string[] = [];
  const servers = new Set<Server>();
  const transports = new Map<string, StreamableHTTPServerTransport>();

  const build = (): Server => {
    const server = new Server(
      { name: `desk-at-${canary}`, version: "1" },
      { capabilities: { tools: {}, prompts: {}, resources: { subscribe: true }, completions: {}, logging: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: ["ask", "elicit", "roots", "touch"].map((name) => ({ name, inputSchema: { type: "object" as const } })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const args = request.params.arguments ?? {};
      const progressToken = extra._meta?.progressToken;
      try {
        switch (request.params.name) {
          case "ask": {
            if (progressToken !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: 1, total: 2 } });
            await extra.sendNotification({ method: "notifications/message", params: { level: "info", logger: "desk", data: `desk asks from ${path}` } });
            const answer = await extra.sendRequest(
              { method: "sampling/createMessage", params: { messages: [{ role: "user", content: { type: "text", text: String(args.question) } }], maxTokens: 10 } },
              CreateMessageResultSchema,
            );
            if (progressToken !== undefined) await extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: 2, total: 2 } });
            return { content: [{ type: "text", text: `answer: ${answer.content.type === "text" ? answer.content.text : "?"}` }] };
          }
          case "elicit": {
            const result = await extra.sendRequest(
              { method: "elicitation/create", params: { message: "Your name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } } },
              ElicitResultSchema,
            );
            return { content: [{ type: "text", text: `${result.action}: ${JSON.stringify(result.content ?? {})}` }] };
          }
          case "roots": {
            const result = await extra.sendRequest({ method: "roots/list" }, ListRootsResultSchema);
            return { content: [{ type: "text", text: result.roots.map((r) => r.uri).join(",") }] };
          }
          case "touch": {
            const uri = String(args.uri);
            if (subscribed.has(uri)) for (const s of servers) await s.sendResourceUpdated({ uri }).catch(() => undefined);
            return { content: [{ type: "text", text: "touched" }] };
          }
          default:
            return { isError: true, content: [{ type: "text", text: "no such tool" }] };
        }
      } catch (error) {
        // What the client of the gateway is told, as the tool's error result.
        return { isError: true, content: [{ type: "text", text: `failed: ${(error as Error).message}` }] };
      }
    });
    server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [{ name: "greet", arguments: [{ name: "who", required: true }] }] }));
    server.setRequestHandler(GetPromptRequestSchema, (request) => ({ messages: [{ role: "user", content: { type: "text", text: `Hi ${request.params.arguments?.who}` } }] }));
    server.setRequestHandler(ListResourcesRequestSchema, () => ({ resources: [{ uri: "desk://doc/alpha", name: "alpha" }] }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [{ uriTemplate: "desk://doc/{name}", name: "doc" }] }));
    server.setRequestHandler(ReadResourceRequestSchema, (request) => ({ contents: [{ uri: request.params.uri, text: "doc" }] }));
    server.setRequestHandler(SubscribeRequestSchema, (request) => {
      subscribed.add(request.params.uri);
      subscriptionLog.push(`subscribe ${request.params.uri}`);
      return {};
    });
    server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
      subscribed.delete(request.params.uri);
      subscriptionLog.push(`unsubscribe ${request.params.uri}`);
      return {};
    });
    server.setRequestHandler(CompleteRequestSchema, (request) => {
      const { ref, argument } = request.params;
      const pool = ref.type === "ref/prompt" && ref.name === "greet" ? NAMES : ref.type === "ref/resource" && ref.uri === "desk://doc/{name}" ? DOCS : [];
      return { completion: { values: pool.filter((v) => v.toLowerCase().startsWith(argument.value.toLowerCase())) } };
    });
    return server;
  };

  const http: HttpServer = createServer((req, res) => {
    if (!req.url?.startsWith(path) || req.headers.authorization !== `Bearer ${token}`) {
      res.writeHead(401).end(`refused at ${canary}`);
      return;
    }
    const id = req.headers["mcp-session-id"];
    const existing = typeof id === "string" ? transports.get(id) : undefined;
    if (existing !== undefined) {
      void existing.handleRequest(req, res);
      return;
    }
    const server = build();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void transports.set(sessionId, transport),
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) transports.delete(transport.sessionId);
      servers.delete(server);
    };
    servers.add(server);
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((done) => http.listen(0, "127.0.0.1", done));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    token,
    subscribed,
    subscriptionLog,
    close: async () => {
      for (const server of servers) await server.close().catch(() => undefined);
      await new Promise<void>((done) => {
        http.closeAllConnections();
        http.close(() => done());
      });
    },
  };
}
