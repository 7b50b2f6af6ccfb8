// The one MCP server a client sees at /mcp: per session, an SDK Server whose handlers present the
// union of the configured servers' tools, prompts and resources under prefixed names (core/mcp-names.ts),
// filtered by the key's and the workspace's allowlists, and forward each call to its server.
// A server that is down is never an empty list without a reason: a listing names the servers that
// failed (in `_meta` and a log notification), and fails when every server it would list failed.
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type ServerNotification,
} from "@modelcontextprotocol/sdk/types.js";
import { mcpServerAllowed, mcpServerVisible, mcpToolAllowed, prefixedName, prefixedUri, splitPrefixedName, splitPrefixedUri } from "../core/mcp-names.js";
import type { Principal } from "../pipeline/auth-cache.js";
import { meteredCall, type CallServices } from "./metered-call.js";
import type { UpstreamPool } from "./upstream-pool.js";
import type { ServerListings, UpstreamServer } from "./upstream-server.js";
import { notAllowed, relayCall, resolve } from "./call-relay.js";
import { registerSessionExtras } from "./session-extras.js";

/** What a session's handlers read: the pool, and the principal of the session's latest HTTP request. */
export interface SessionContext {
  pool: UpstreamPool;
  services: CallServices;
  principal(): Principal;
}

/** Where the gateway's notes on a listing go in its result's `_meta`. */
export const UNAVAILABLE_META = "io.model-gateway/unavailable_servers";

type Sender = (notification: ServerNotification) => Promise<void>;

export function createSessionServer(context: SessionContext): Server {
  const server = new Server(
    { name: "model-gateway", version: "1" },
    {
      // Subscriptions and completions are forwarded to the server that owns the URI or name (session-extras.ts); a server without them refuses or completes nothing.
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true, subscribe: true }, completions: {}, logging: {} },
      instructions: "Tools, prompts and resources of the gateway's MCP servers, each named <server>__<name> (resources: mcp-gw://<server>/<uri>).",
    },
  );
  const { pool } = context;
  const keyList = () => context.principal().key.allowedMcp;
  const workspaceList = () => context.principal().workspace?.allowedMcp ?? null;
  const serverAllowed = (name: string) => mcpServerAllowed(keyList(), name) && mcpServerAllowed(workspaceList(), name);
  const toolVisible = (name: string, tool: string) => mcpToolAllowed(keyList(), name, tool) && mcpToolAllowed(workspaceList(), name, tool);

  /** The servers a listing covers, waited for while starting; the healthy ones' listings, and why the others failed. */
  async function gather(what: string, covers: (server: UpstreamServer) => boolean, send: Sender) {
    const servers = pool.all().filter(covers);
    await pool.settled(servers);
    const ready: Array<{ server: UpstreamServer; listings: ServerListings }> = [];
    const unavailable: Array<{ server: string; reason: string }> = [];
    for (const server of servers) {
      const { state } = server;
      if (state.kind === "ready") ready.push({ server, listings: server.listings });
      else unavailable.push({ server: server.name, reason: state.kind === "down" ? state.reason : state.kind === "starting" ? "it is still starting" : "it is not running" });
    }
    const text = unavailable.map((u) => `${u.server}: ${u.reason}`).join("; ");
    if (servers.length > 0 && ready.length === 0) {
      throw new McpError(ErrorCode.InternalError, `No MCP server could list its ${what}: ${text}.`, { unavailable });
    }
    if (unavailable.length > 0) {
      await send({
        method: "notifications/message",
        params: { level: "error", logger: "model-gateway", data: `Some MCP servers are unavailable; their ${what} are not listed: ${text}.` },
      }).catch(() => undefined);
    }
    const meta = unavailable.length > 0 ? { _meta: { [UNAVAILABLE_META]: unavailable } } : {};
    return { ready, meta };
  }

  const scrub = <T>(value: T): T => pool.scrubber.scrubJson(value) as T;

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const { ready, meta } = await gather("tools", (s) => mcpServerVisible(keyList(), s.name) && mcpServerVisible(workspaceList(), s.name), extra.sendNotification);
    const tools = ready.flatMap(({ server, listings }) =>
      listings.tools.filter((tool) => toolVisible(server.name, tool.name)).map((tool) => ({ ...scrub(tool), name: prefixedName(server.name, tool.name) })),
    );
    return { tools, ...meta };
  });

  server.setRequestHandler(ListPromptsRequestSchema, async (_request, extra) => {
    const { ready, meta } = await gather("prompts", (s) => serverAllowed(s.name), extra.sendNotification);
    const prompts = ready.flatMap(({ server, listings }) => listings.prompts.map((prompt) => ({ ...scrub(prompt), name: prefixedName(server.name, prompt.name) })));
    return { prompts, ...meta };
  });

  server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => {
    const { ready, meta } = await gather("resources", (s) => serverAllowed(s.name), extra.sendNotification);
    const resources = ready.flatMap(({ server, listings }) => listings.resources.map((resource) => ({ ...scrub(resource), uri: prefixedUri(server.name, resource.uri) })));
    return { resources, ...meta };
  });

  server.setRequestHandler(ListResourceTemplatesRequestSchema, async (_request, extra) => {
    const { ready, meta } = await gather("resource templates", (s) => serverAllowed(s.name), extra.sendNotification);
    const resourceTemplates = ready.flatMap(({ server, listings }) =>
      listings.templates.map((template) => ({ ...scrub(template), uriTemplate: prefixedUri(server.name, template.uriTemplate) })),
    );
    return { resourceTemplates, ...meta };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const presented = request.params.name;
    const upstream = resolve(pool, splitPrefixedName(presented), `tool ${presented}`);
    const tool = splitPrefixedName(presented)!.name;
    if (!mcpToolAllowed(keyList(), upstream.name, tool)) throw notAllowed(`tool ${presented}`, "key's");
    if (!mcpToolAllowed(workspaceList(), upstream.name, tool)) throw notAllowed(`tool ${presented}`, "workspace's");
    const call = () =>
      relayCall(
        server,
        upstream,
        extra,
        pool.scrubber,
        "tools/call",
        async (client, { meta, options }) => (await client.callTool({ name: tool, arguments: request.params.arguments ?? {}, _meta: meta }, undefined, options)) as CallToolResult,
      );
    const result = await meteredCall(
      context.services,
      context.principal(),
      { method: "tools/call", server: upstream.name, name: tool, presented },
      upstream.settings.pricePerCall,
      call,
      (r) => r.isError === true,
    );
    return scrub(result);
  });

  server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
    const presented = request.params.name;
    const upstream = resolve(pool, splitPrefixedName(presented), `prompt ${presented}`);
    if (!serverAllowed(upstream.name)) throw notAllowed(`prompt ${presented}`, mcpServerAllowed(keyList(), upstream.name) ? "workspace's" : "key's");
    const name = splitPrefixedName(presented)!.name;
    const result = await meteredCall(
      context.services,
      context.principal(),
      { method: "prompts/get", server: upstream.name, name, presented },
      null,
      () =>
        relayCall(server, upstream, extra, pool.scrubber, "prompts/get", (client, { meta, options }) =>
          client.getPrompt({ name, arguments: request.params.arguments, _meta: meta }, options),
        ),
      () => false,
    );
    return scrub(result);
  });

  server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const split = splitPrefixedUri(request.params.uri);
    const upstream = resolve(pool, split && { server: split.server, name: split.uri }, `resource ${request.params.uri}`);
    if (!serverAllowed(upstream.name)) throw notAllowed(`resource ${request.params.uri}`, mcpServerAllowed(keyList(), upstream.name) ? "workspace's" : "key's");
    const result = await meteredCall(
      context.services,
      context.principal(),
      { method: "resources/read", server: upstream.name, name: null, presented: null },
      null,
      () => relayCall(server, upstream, extra, pool.scrubber, "resources/read", (client, { meta, options }) => client.readResource({ uri: split!.uri, _meta: meta }, options)),
      () => false,
    );
    // The server's own URIs in the contents are presented with the prefix, like the listing's.
    return { ...scrub(result), contents: scrub(result.contents).map((content) => ({ ...content, uri: prefixedUri(upstream.name, content.uri) })) };
  });

  registerSessionExtras(server, { pool, serverAllowed, notAllowedBy: (name) => (mcpServerAllowed(keyList(), name) ? "workspace's" : "key's") });
  return server;
}
