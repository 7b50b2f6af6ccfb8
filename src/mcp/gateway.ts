// The MCP gateway's sessions: one SDK WebStandardStreamableHTTPServerTransport and session server per
// Mcp-Session-Id, owned by the gateway key that initialized it (another key is told it does not
// exist), at most mcp.max_sessions_per_key per key (opening one more closes that key's least
// recently used) and MAX_SESSIONS in all, closed after mcp.session_idle_s unused. The pool of
// upstream servers follows the config: sync() applies a reloaded `mcp` section.
import { randomUUID } from "node:crypto";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Logger } from "pino";
import type { McpSettings } from "../config/mcp-settings.js";
import type { Principal } from "../pipeline/auth-cache.js";
import type { CallServices } from "./metered-call.js";
import { createSessionServer } from "./session-server.js";
import { UpstreamPool } from "./upstream-pool.js";

/** Sessions of every key together at most; one more closes the least recently used. */
export const MAX_SESSIONS = 10_000;
const SWEEP_MS = 30_000;

export interface McpSession {
  id: string | null;
  keyId: string;
  principal: Principal;
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  lastUsedAt: number;
}

export class McpGateway {
  readonly pool: UpstreamPool;
  readonly #sessions = new Map<string, McpSession>();
  readonly #sweeper: NodeJS.Timeout;
  #closed = false;

  constructor(
    private readonly settings: () => McpSettings,
    private readonly services: () => CallServices,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.pool = new UpstreamPool(logger, () => this.#listsChanged());
    this.#sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.#sweeper.unref();
  }

  /** Applies the running config's `mcp` section (a reload's, when it changed). */
  sync(): void {
    if (!this.#closed) this.pool.apply(this.settings());
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  /** The key's session of that id, or null (unknown, closed, or another key's). */
  find(id: string, keyId: string): McpSession | null {
    const session = this.#sessions.get(id);
    return session !== undefined && session.keyId === keyId ? session : null;
  }

  /** A new session for an initialize request; registered under its id once the transport assigns one. */
  async open(principal: Principal): Promise<McpSession> {
    const session: McpSession = {
      id: null,
      keyId: principal.key.id,
      principal,
      lastUsedAt: this.now(),
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          session.id = id;
          this.#makeRoom(session.keyId);
          this.#sessions.set(id, session);
        },
      }),
      server: createSessionServer({ pool: this.pool, services: this.services(), principal: () => session.principal }),
    };
    session.transport.onclose = () => {
      if (session.id !== null) this.#sessions.delete(session.id);
    };
    await session.server.connect(session.transport);
    return session;
  }

  /** Closes sessions unused for mcp.session_idle_s. */
  sweep(): void {
    const oldest = this.now() - this.settings().sessionIdleMs;
    for (const session of [...this.#sessions.values()]) if (session.lastUsedAt < oldest) this.#close(session, "idle");
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    for (const session of [...this.#sessions.values()]) this.#close(session, "shutdown");
    await this.pool.close();
  }

  #makeRoom(keyId: string): void {
    const own = [...this.#sessions.values()].filter((s) => s.keyId === keyId);
    const max = this.settings().maxSessionsPerKey;
    if (own.length >= max) for (const session of leastRecent(own, own.length - max + 1)) this.#close(session, "key's session limit");
    if (this.#sessions.size >= MAX_SESSIONS)
      for (const session of leastRecent([...this.#sessions.values()], this.#sessions.size - MAX_SESSIONS + 1)) this.#close(session, "gateway's session limit");
  }

  #close(session: McpSession, reason: string): void {
    if (session.id !== null) this.#sessions.delete(session.id);
    this.logger.info({ mcp_session_key: session.keyId, reason }, "MCP session closed");
    void session.server.close().catch(() => undefined);
  }

  /** Tells every session that the lists changed (on its GET stream, when the client keeps one open). */
  #listsChanged(): void {
    for (const session of this.#sessions.values()) {
      void session.server.sendToolListChanged().catch(() => undefined);
      void session.server.sendPromptListChanged().catch(() => undefined);
      void session.server.sendResourceListChanged().catch(() => undefined);
    }
  }
}

function leastRecent(sessions: McpSession[], count: number): McpSession[] {
  return [...sessions].sort((a, b) => a.lastUsedAt - b.lastUsedAt).slice(0, count);
}
