// One MCP server the operator configured, as the gateway's client of it (the SDK's Client over
// stdio or streamable HTTP): connected at start, its tools, prompts and resources listed and kept
// (listed again on its list_changed notifications), and supervised: a stdio server that exits, or
// a server that cannot be reached, is connected again with a backoff (1 s doubling to 30 s) until
// it is stopped. What it is told about why it is down is a classification (core of `reasonOf`),
// never the upstream's own text, URL or headers: that goes to the gateway's log, scrubbed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  ErrorCode,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { McpServerSettings } from "../config/mcp-settings.js";
import type { Scrubber } from "../pipeline/scrub.js";
import { callTaggingFetch, CallPeers, UPSTREAM_CLIENT_CAPABILITIES } from "./upstream-peers.js";
import { ResourceSubscriptions } from "./upstream-subscriptions.js";

// The JSON-RPC codes compared with an error's (a number: the SDK's enum is not its type).
const CONNECTION_CLOSED: number = ErrorCode.ConnectionClosed;
const INVALID_PARAMS: number = ErrorCode.InvalidParams;
const METHOD_NOT_FOUND: number = ErrorCode.MethodNotFound;
const REQUEST_TIMEOUT: number = ErrorCode.RequestTimeout;

/** Listings longer than this many pages are cut (a server that pages forever must not hold a session). */
const MAX_PAGES = 20;
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 30_000;
/** A server up this long has its backoff reset. */
const STABLE_MS = 60_000;

export type ServerState = { kind: "starting" } | { kind: "ready"; since: number } | { kind: "down"; reason: string; since: number } | { kind: "stopped" };

export interface ServerListings {
  tools: readonly Tool[];
  prompts: readonly Prompt[];
  resources: readonly Resource[];
  templates: readonly ResourceTemplate[];
}

const EMPTY: ServerListings = { tools: [], prompts: [], resources: [], templates: [] };

export class UpstreamServer {
  #state: ServerState = { kind: "starting" };
  #client: Client | null = null;
  #listings: ServerListings = EMPTY;
  #retryMs = FIRST_RETRY_MS;
  #retryTimer: NodeJS.Timeout | null = null;
  /** Settles when the current connection attempt has (whatever its outcome). */
  #attempt: Promise<void> = Promise.resolve();
  /** Connections made so far (a restart counts one more); tests read it. */
  connections = 0;
  /** The calls in flight, for the server's requests and logging messages made while handling one. */
  readonly peers: CallPeers;
  /** The sessions' resource subscriptions on this server. */
  readonly subscriptions = new ResourceSubscriptions(() => (this.#state.kind === "ready" ? this.#client : null));

  constructor(
    /** Replaced on a reload that changes only the price or the call timeout. */
    public settings: McpServerSettings,
    private readonly scrubber: Scrubber,
    private readonly logger: Logger,
    /** Called when the server's listings or state changed: sessions are told their lists changed. */
    private readonly onChange: () => void,
  ) {
    this.peers = new CallPeers(settings.transport.kind);
  }

  get name(): string {
    return this.settings.name;
  }

  get state(): ServerState {
    return this.#state;
  }

  get listings(): ServerListings {
    return this.#listings;
  }

  /** The child process's id of a stdio server that is running (tests kill it); null otherwise. */
  pid: number | null = null;

  start(): void {
    this.#attempt = this.#connect();
  }

  /** Resolves once the current connection attempt has settled (up to the connect timeout). */
  settled(): Promise<void> {
    return this.#attempt;
  }

  async stop(): Promise<void> {
    this.#state = { kind: "stopped" };
    if (this.#retryTimer) clearTimeout(this.#retryTimer);
    const client = this.#client;
    this.#client = null;
    this.pid = null;
    await client?.close().catch(() => undefined);
  }

  /** The connected client, or an McpError saying why there is none. */
  client(): Client {
    if (this.#client !== null && this.#state.kind === "ready") return this.#client;
    const reason = this.#state.kind === "down" ? this.#state.reason : this.#state.kind === "starting" ? "is still starting" : "is not running";
    throw new McpError(ErrorCode.InternalError, `MCP server ${this.name} is unavailable: ${reason}.`, { server: this.name, reason });
  }

  /**
   * A call's failure as the client is told it: the server's name, the method and a classification.
   * A failure of the connection itself marks the server down and reconnects it.
   */
  failure(method: string, error: unknown): McpError {
    const reason = reasonOf(error, this.settings.callTimeoutMs);
    this.logger.warn({ mcp_server: this.name, method, err: this.scrubber.scrubText(String((error as Error)?.message ?? error)) }, "MCP server call failed");
    if (!(error instanceof McpError) || error.code === CONNECTION_CLOSED) this.#down(reason);
    const code = error instanceof McpError && error.code === INVALID_PARAMS ? ErrorCode.InvalidParams : ErrorCode.InternalError;
    return new McpError(code, `MCP server ${this.name} failed ${method}: ${reason}.`, { server: this.name, reason });
  }

  /** True when the connected server takes resources/subscribe. */
  get supportsSubscribe(): boolean {
    return this.#client?.getServerCapabilities()?.resources?.subscribe === true;
  }

  /** True when the connected server answers completion/complete. */
  get supportsCompletions(): boolean {
    return this.#client?.getServerCapabilities()?.completions !== undefined;
  }

  #isStopped(): boolean {
    return this.#state.kind === "stopped";
  }

  async #connect(): Promise<void> {
    if (this.#state.kind === "stopped") return;
    const { settings } = this;
    // Sampling, elicitation and roots are declared: each is forwarded to the client whose call asked for it (upstream-peers.ts).
    const client = new Client({ name: "model-gateway", version: "1" }, { capabilities: UPSTREAM_CLIENT_CAPABILITIES });
    this.peers.install(client, this.name);
    let transport: Transport;
    if (settings.transport.kind === "stdio") {
      const stdio = new StdioClientTransport({
        command: settings.transport.command,
        args: [...settings.transport.args],
        // Only the SDK's short list of safe variables (PATH, HOME…) and the server's own: never the gateway's secrets.
        env: { ...getDefaultEnvironment(), ...settings.transport.env },
        stderr: "ignore",
      });
      transport = stdio;
    } else {
      transport = new StreamableHTTPClientTransport(settings.transport.url, {
        requestInit: { headers: { ...settings.transport.headers }, redirect: "error" },
        fetch: callTaggingFetch(),
      });
    }
    try {
      await client.connect(transport, { timeout: settings.connectTimeoutMs });
      this.pid = transport instanceof StdioClientTransport ? transport.pid : null;
      this.#client = client;
      this.#listings = await this.#list(client);
      if (this.#isStopped()) {
        await client.close().catch(() => undefined);
        return;
      }
      this.connections += 1;
      const since = Date.now();
      this.#state = { kind: "ready", since };
      client.onclose = () => {
        if (this.#client !== client) return;
        this.#down(settings.transport.kind === "stdio" ? "its process exited" : "the connection closed");
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.#relist(client, "tools"));
      client.setNotificationHandler(PromptListChangedNotificationSchema, () => void this.#relist(client, "prompts"));
      client.setNotificationHandler(ResourceListChangedNotificationSchema, () => void this.#relist(client, "resources"));
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => this.subscriptions.deliver(notification.params.uri));
      this.subscriptions.renew(client, settings.callTimeoutMs);
      this.logger.info({ mcp_server: this.name, tools: this.#listings.tools.length }, "MCP server connected");
      this.onChange();
    } catch (error) {
      await client.close().catch(() => undefined);
      if (this.#client === client) this.#client = null;
      this.logger.warn({ mcp_server: this.name, err: this.scrubber.scrubText(String((error as Error)?.message ?? error)) }, "connecting to an MCP server failed");
      this.#down(reasonOf(error, settings.connectTimeoutMs));
    }
  }

  #down(reason: string): void {
    if (this.#state.kind === "stopped" || this.#state.kind === "down") return;
    const wasReady = this.#state.kind === "ready" ? this.#state.since : null;
    this.#state = { kind: "down", reason, since: Date.now() };
    const client = this.#client;
    this.#client = null;
    this.pid = null;
    void client?.close().catch(() => undefined);
    this.#listings = EMPTY;
    if (wasReady !== null && Date.now() - wasReady >= STABLE_MS) this.#retryMs = FIRST_RETRY_MS;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, MAX_RETRY_MS);
    this.logger.warn({ mcp_server: this.name, reason, retry_in_ms: delay }, "MCP server down; connecting again");
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      if (this.#state.kind === "stopped") return;
      this.#state = { kind: "starting" };
      this.#attempt = this.#connect();
    }, delay);
    this.#retryTimer.unref();
    this.onChange();
  }

  async #relist(client: Client, kind: "tools" | "prompts" | "resources"): Promise<void> {
    if (this.#client !== client) return;
    try {
      const fresh = await this.#list(client);
      this.#listings =
        kind === "tools"
          ? { ...this.#listings, tools: fresh.tools }
          : kind === "prompts"
            ? { ...this.#listings, prompts: fresh.prompts }
            : { ...fresh, tools: this.#listings.tools, prompts: this.#listings.prompts };
      this.onChange();
    } catch (error) {
      this.failure(`listing ${kind}`, error);
    }
  }

  async #list(client: Client): Promise<ServerListings> {
    const capabilities = client.getServerCapabilities() ?? {};
    const options = { timeout: this.settings.callTimeoutMs };
    // A server that declares a capability but lacks one of its list methods (resource templates, often) lists none of that kind.
    const pages = async <T>(fetchPage: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>): Promise<T[]> => {
      const all: T[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        let fetched: { items: T[]; nextCursor?: string | undefined };
        try {
          fetched = await fetchPage(cursor);
        } catch (error) {
          if (error instanceof McpError && error.code === METHOD_NOT_FOUND) return all;
          throw error;
        }
        const { items, nextCursor } = fetched;
        all.push(...items);
        if (!nextCursor) break;
        cursor = nextCursor;
      }
      return all;
    };
    const [tools, prompts, resources, templates] = await Promise.all([
      capabilities.tools ? pages(async (cursor) => ((r) => ({ items: r.tools, nextCursor: r.nextCursor }))(await client.listTools({ cursor }, options))) : [],
      capabilities.prompts ? pages(async (cursor) => ((r) => ({ items: r.prompts, nextCursor: r.nextCursor }))(await client.listPrompts({ cursor }, options))) : [],
      capabilities.resources ? pages(async (cursor) => ((r) => ({ items: r.resources, nextCursor: r.nextCursor }))(await client.listResources({ cursor }, options))) : [],
      capabilities.resources
        ? pages(async (cursor) => ((r) => ({ items: r.resourceTemplates, nextCursor: r.nextCursor }))(await client.listResourceTemplates({ cursor }, options)))
        : [],
    ]);
    return { tools, prompts, resources, templates };
  }
}

/** Why a server failed, in the gateway's words: never the upstream's text, URL or headers. */
export function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof StreamableHTTPError) return error.code === undefined ? "its HTTP endpoint answered unexpectedly" : `its HTTP endpoint answered HTTP ${error.code}`;
  if (error instanceof McpError) {
    if (error.code === REQUEST_TIMEOUT) return `it did not answer within ${timeoutMs} ms`;
    if (error.code === CONNECTION_CLOSED) return "the connection closed";
    if (error.code === METHOD_NOT_FOUND) return "it does not support the method";
    if (error.code === INVALID_PARAMS) return "it refused the arguments as invalid (JSON-RPC -32602)";
    return `it answered with an error (JSON-RPC ${error.code})`;
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "ENOENT" || code === "EACCES") return `its command could not be started (${code})`;
  if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return `it could not be reached (${code})`;
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause?.code;
  if (typeof cause === "string" && /^E[A-Z]+$/.test(cause)) return `it could not be reached (${cause})`;
  return "it could not be reached";
}
