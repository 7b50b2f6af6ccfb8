// A client's call as the session server forwards it to the server that owns the name: the upstream
// server's requests made while handling it (sampling/createMessage, elicitation/create, roots/list)
// go to this client on the call's own stream, only when the client declared that capability at
// initialize (otherwise the server gets an MCP error at once, never a wait), each bounded by the
// server's call timeout; its progress notifications and logging messages for the call reach this
// client too (progress under the client's own progressToken). What the client receives is scrubbed
// of the servers' URLs and secrets, like every result.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  ErrorCode,
  McpError,
  type ClientCapabilities,
  type ServerNotification,
  type ServerRequest,
  type ClientRequest,
  type ClientNotification,
  type Progress,
} from "@modelcontextprotocol/sdk/types.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { Scrubber } from "../pipeline/scrub.js";
import type { UpstreamPool } from "./upstream-pool.js";
import type { CallPeer } from "./upstream-peers.js";
import type { UpstreamServer } from "./upstream-server.js";

export type HandlerExtra = RequestHandlerExtra<ClientRequest | ServerRequest, ClientNotification | ServerNotification>;

/** The configured server a presented name or URI belongs to; an MCP error for one that names none. */
export function resolve(pool: UpstreamPool, split: { server: string; name: string } | null, what: string): UpstreamServer {
  const server = split === null ? undefined : pool.get(split.server);
  if (server === undefined)
    throw new McpError(ErrorCode.InvalidParams, `Unknown ${what}: names are <server>__<name> (resources mcp-gw://<server>/<uri>) for a configured MCP server.`);
  return server;
}

export function notAllowed(what: string, whose: "key's" | "workspace's"): McpError {
  return new McpError(ErrorCode.InvalidRequest, `The ${what} is not allowed for this key: it is not in the ${whose} MCP allowlist (allowed_mcp).`, {
    type: "forbidden",
    code: "mcp_not_allowed",
  });
}

/** A call on the server's client: an MCP error naming the server when it is down or the call fails. */
export async function forward<T>(upstream: UpstreamServer, method: string, call: (client: Client) => Promise<T>): Promise<T> {
  // A server still starting (at start, after a reload or a restart) is waited for, at most its connect timeout.
  if (upstream.state.kind === "starting") await upstream.settled();
  const client = upstream.client();
  try {
    return await call(client);
  } catch (error) {
    throw upstream.failure(method, error);
  }
}

/** What a relayed call adds to its forwarded request: the `_meta` that identifies it, and the request options. */
export interface Relayed {
  meta: Record<string, string>;
  options: RequestOptions;
}

/**
 * Forwards a call of this session's client (`what` names it in errors) to `upstream`, with the
 * server's requests, progress and logging for it relayed to the client.
 */
export function relayCall<T>(
  session: Server,
  upstream: UpstreamServer,
  extra: HandlerExtra,
  scrubber: Scrubber,
  method: string,
  call: (client: Client, relayed: Relayed) => Promise<T>,
): Promise<T> {
  const clientToken = extra._meta?.progressToken;
  // The last progress may arrive just before the result: it is sent to the client before the result is.
  let progressSent: Promise<unknown> = Promise.resolve();
  const progress =
    clientToken === undefined
      ? null
      : (update: Progress): void => {
          const notification = { method: "notifications/progress" as const, params: { ...(scrubber.scrubJson(update) as Progress), progressToken: clientToken } };
          progressSent = progressSent.then(() => extra.sendNotification(notification)).catch(() => undefined);
        };
  const peer = peerOf(session, upstream, extra, scrubber, method, progress);
  return forward(upstream, method, async (client) => {
    // The forwarded request carries the call's own progress token; the client hears of it under its own.
    const result = await upstream.peers.run(peer, (meta) => call(client, { meta, options: { timeout: upstream.settings.callTimeoutMs, signal: extra.signal } }));
    await progressSent;
    return result;
  });
}

function peerOf(session: Server, upstream: UpstreamServer, extra: HandlerExtra, scrubber: Scrubber, method: string, progress: CallPeer["progress"]): CallPeer {
  return {
    progress,
    async request(request, resultSchema, signal) {
      const missing = missingCapability(request, session.getClientCapabilities() ?? {});
      if (missing !== null) {
        throw new McpError(
          ErrorCode.MethodNotFound,
          `MCP server ${upstream.name} asked for ${request.method} while handling ${method}, but this client did not declare the ${missing} capability at initialize.`,
        );
      }
      return extra.sendRequest(scrubber.scrubJson(request) as ServerRequest, resultSchema, { timeout: upstream.settings.callTimeoutMs, signal });
    },
    async notify(notification) {
      await extra.sendNotification(scrubber.scrubJson(notification) as ServerNotification);
    },
  };
}

/** The client capability a server request needs that the client did not declare; null when it did. */
function missingCapability(request: ServerRequest, capabilities: ClientCapabilities): string | null {
  switch (request.method) {
    case "sampling/createMessage":
      return capabilities.sampling === undefined ? "sampling" : null;
    case "elicitation/create": {
      const declared = capabilities.elicitation;
      if (declared === undefined) return "elicitation";
      // An empty elicitation capability means form mode (the protocol's earlier revision).
      const url = request.params.mode === "url";
      if (url) return declared.url === undefined ? "elicitation.url" : null;
      return declared.form === undefined && declared.url !== undefined ? "elicitation.form" : null;
    }
    case "roots/list":
      return capabilities.roots === undefined ? "roots" : null;
    default:
      return request.method;
  }
}
