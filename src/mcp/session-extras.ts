// The session server's resource subscriptions and completions, forwarded to the server that owns
// the presented URI or name (within the key's and workspace's allowlists).
// - resources/subscribe: at most MAX_SUBSCRIPTIONS_PER_SESSION per session; the server's
//   notifications/resources/updated reach this session (URI prefixed) until it unsubscribes or
//   closes. A server that does not declare resources.subscribe refuses with an MCP error naming it.
//   Subscriptions are this process's state: a session rebuilt elsewhere, or a server restarted by a
//   reload, starts without them (clients subscribe again after initialize).
// - completion/complete: prompt arguments and resource template arguments. A server without
//   completions completes nothing (an empty list: completions are suggestions while typing).
//   Completions are not metered or recorded: they are frequent, free and carry no result of a call.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CompleteRequestSchema, ErrorCode, McpError, SubscribeRequestSchema, UnsubscribeRequestSchema, type CompleteRequest } from "@modelcontextprotocol/sdk/types.js";
import { prefixedUri, splitPrefixedName, splitPrefixedUri } from "../core/mcp-names.js";
import { forward, notAllowed, resolve } from "./call-relay.js";
import type { UpstreamPool } from "./upstream-pool.js";
import type { UpstreamServer } from "./upstream-server.js";

/** Resource subscriptions of one session at most. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 100;

export interface ExtrasContext {
  pool: UpstreamPool;
  /** True when the key's and the workspace's allowlists allow the whole server. */
  serverAllowed(server: string): boolean;
  /** Whose allowlist refuses the server. */
  notAllowedBy(server: string): "key's" | "workspace's";
}

export function registerSessionExtras(session: Server, context: ExtrasContext): void {
  const { pool } = context;
  /** Presented URI → removes this session's subscription. */
  const subscriptions = new Map<string, () => void>();

  const owner = (presented: string, what: string): { upstream: UpstreamServer; uri: string } => {
    const split = splitPrefixedUri(presented);
    const upstream = resolve(pool, split && { server: split.server, name: split.uri }, what);
    if (!context.serverAllowed(upstream.name)) throw notAllowed(what, context.notAllowedBy(upstream.name));
    return { upstream, uri: split!.uri };
  };

  session.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const presented = request.params.uri;
    const { upstream, uri } = owner(presented, `resource ${presented}`);
    if (subscriptions.has(presented)) return {};
    if (subscriptions.size >= MAX_SUBSCRIPTIONS_PER_SESSION) {
      throw new McpError(ErrorCode.InvalidRequest, `A session has at most ${MAX_SUBSCRIPTIONS_PER_SESSION} resource subscriptions: unsubscribe from one first.`);
    }
    if (upstream.state.kind === "starting") await upstream.settled();
    if (upstream.state.kind === "ready" && !upstream.supportsSubscribe) {
      throw new McpError(ErrorCode.MethodNotFound, `MCP server ${upstream.name} does not support resource subscriptions (it does not declare resources.subscribe).`);
    }
    const listener = (updated: string): void => {
      // An allowlist narrowed since the subscription applies to the next update.
      if (!context.serverAllowed(upstream.name)) return;
      void session.sendResourceUpdated({ uri: prefixedUri(upstream.name, updated) }).catch(() => undefined);
    };
    const remove = await forward(upstream, "resources/subscribe", (client) => upstream.subscriptions.add(client, uri, listener, upstream.settings.callTimeoutMs));
    // A second subscribe of the same URI raced this one: one subscription is kept.
    if (subscriptions.has(presented)) remove();
    else subscriptions.set(presented, remove);
    return {};
  });

  session.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    subscriptions.get(request.params.uri)?.();
    subscriptions.delete(request.params.uri);
    return {};
  });

  const previousOnClose = session.onclose;
  session.onclose = () => {
    previousOnClose?.();
    for (const remove of subscriptions.values()) remove();
    subscriptions.clear();
  };

  session.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
    const { ref, argument, context: completionContext } = request.params;
    let upstream: UpstreamServer;
    let upstreamRef: CompleteRequest["params"]["ref"];
    if (ref.type === "ref/prompt") {
      const split = splitPrefixedName(ref.name);
      upstream = resolve(pool, split, `prompt ${ref.name}`);
      if (!context.serverAllowed(upstream.name)) throw notAllowed(`prompt ${ref.name}`, context.notAllowedBy(upstream.name));
      upstreamRef = { ...ref, name: split!.name };
    } else {
      const found = owner(ref.uri, `resource template ${ref.uri}`);
      upstream = found.upstream;
      upstreamRef = { ...ref, uri: found.uri };
    }
    if (upstream.state.kind === "starting") await upstream.settled();
    if (upstream.state.kind === "ready" && !upstream.supportsCompletions) return { completion: { values: [] } };
    const result = await forward(upstream, "completion/complete", (client) =>
      client.complete(
        { ref: upstreamRef, argument, ...(completionContext !== undefined && { context: completionContext }) },
        { timeout: upstream.settings.callTimeoutMs, signal: extra.signal },
      ),
    );
    return pool.scrubber.scrubJson(result) as typeof result;
  });
}
