// The MCP gateway's sessions (ADR 0045). A session is a row of the shared store (mcp_sessions): every
// worker or gateway process on the database accepts a live session of the key that opened it
// (another key is told it does not exist). A process keeps a local copy of each session it serves
// (an SDK WebStandardStreamableHTTPServerTransport and session server); one that has none rebuilds it
// from the stored initialize (session-replay.ts). The per-key limit (mcp.max_sessions_per_key: opening
// one more closes the key's least recently used) and the idle expiry (mcp.session_idle_s) are the
// store's, for the whole gateway. A local copy is trusted for at most VALIDITY_MS: every second the
// process asks the store which of its copies are no longer live and closes them (their GET streams
// end). The pool of upstream servers follows the config: sync() applies a reloaded `mcp` section.
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { Logger } from "pino";
import type { McpSettings } from "../config/mcp-settings.js";
import type { Principal } from "../pipeline/auth-cache.js";
import { newMcpSessionId, type McpSessionsStore, type StoredMcpSession } from "../store/mcp-sessions-store.js";
import type { CallServices } from "./metered-call.js";
import { createSessionServer } from "./session-server.js";
import { negotiatedVersion, replayInitialize } from "./session-replay.js";
import { UpstreamPool } from "./upstream-pool.js";

/** Local copies one process keeps at most; one more drops its least recently used copy (the session lives on in the store). */
export const MAX_SESSIONS = 10_000;
/** How long a local copy is trusted without asking the store: a session closed elsewhere is refused here within this. */
const VALIDITY_MS = 1_000;
const SWEEP_MS = 30_000;
/** Closed rows are kept this long (their reason, for an operator), then pruned: the table stays bounded. */
const PRUNE_AFTER_MS = 60 * 60_000;
/** At most this often a process writes a session's last use (see touchEveryMs). */
const MAX_TOUCH_MS = 5_000;

export interface McpSession {
  id: string;
  keyId: string;
  principal: Principal;
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  /** Last use in this process (for dropping the least recently used local copy). */
  lastUsedAt: number;
  /** When this process last wrote the session's last use to the store. */
  touchedAt: number;
  /** When the store last said the session is live. */
  checkedAt: number;
}

export class McpGateway {
  readonly pool: UpstreamPool;
  readonly #sessions = new Map<string, McpSession>();
  /** Rebuilds in progress, so that parallel first requests in this process share one copy. */
  readonly #rebuilding = new Map<string, Promise<McpSession | null>>();
  readonly #timers: NodeJS.Timeout[];
  #closed = false;
  #checking = false;

  constructor(
    private readonly settings: () => McpSettings,
    private readonly services: () => CallServices,
    private readonly store: McpSessionsStore,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.pool = new UpstreamPool(logger, () => this.#listsChanged());
    this.#timers = [setInterval(() => void this.check(), VALIDITY_MS), setInterval(() => void this.sweep(), SWEEP_MS)];
    for (const timer of this.#timers) timer.unref();
  }

  /** Applies the running config's `mcp` section (a reload's, when it changed). */
  sync(): void {
    if (!this.#closed) this.pool.apply(this.settings());
  }

  /** Local copies in this process. */
  get sessionCount(): number {
    return this.#sessions.size;
  }

  /** The key's live session of that id (this process's copy, rebuilt when it has none), or null (unknown, closed, idle, or another key's). */
  async find(id: string, principal: Principal): Promise<McpSession | null> {
    const local = this.#sessions.get(id);
    if (local !== undefined && local.keyId !== principal.key.id) return null;
    const now = this.now();
    if (local !== undefined && now - local.checkedAt < VALIDITY_MS) return local;
    const stored = await this.store.get(id);
    if (stored === null || stored.keyId !== principal.key.id) return null;
    if (!this.#live(stored, now)) {
      if (stored.closedAt === null) await this.store.close(id, "idle", now);
      if (local !== undefined) this.#closeLocal(local, stored.closeReason ?? "idle");
      return null;
    }
    if (local !== undefined) {
      local.checkedAt = now;
      return local;
    }
    let rebuilding = this.#rebuilding.get(id);
    if (rebuilding === undefined) {
      rebuilding = this.#rebuild(stored, principal).finally(() => this.#rebuilding.delete(id));
      this.#rebuilding.set(id, rebuilding);
    }
    return rebuilding;
  }

  /** A new session for an initialize request (its params), recorded in the store before the transport answers it. */
  async open(principal: Principal, initializeParams: Record<string, unknown>): Promise<McpSession> {
    const id = newMcpSessionId();
    const now = this.now();
    const { maxSessionsPerKey, sessionIdleMs } = this.settings();
    const requested = typeof initializeParams.protocolVersion === "string" ? initializeParams.protocolVersion : "";
    const closed = await this.store.open(
      { id, keyId: principal.key.id, protocolVersion: negotiatedVersion(requested), initializeParams: JSON.stringify(initializeParams) },
      { maxPerKey: maxSessionsPerKey, idleMs: sessionIdleMs },
      now,
    );
    for (const closedId of closed) {
      const copy = this.#sessions.get(closedId);
      if (copy !== undefined) this.#closeLocal(copy, "key's session limit");
      else this.logger.info({ mcp_session_key: principal.key.id, reason: "key's session limit" }, "MCP session closed");
    }
    return this.#local(id, principal, now);
  }

  /** Records a use of the session: locally always, in the store at most every touchEveryMs. */
  async used(session: McpSession): Promise<void> {
    const now = this.now();
    session.lastUsedAt = now;
    // Writing every request's time would be one database write per MCP message (an agent sends many)
    // for a figure that only decides idle expiry and the least recently used, both coarse: a time
    // late by a tenth of the idle time at most (and 5 s) is enough. A process's first use writes.
    if (now - session.touchedAt < touchEveryMs(this.settings().sessionIdleMs)) return;
    session.touchedAt = now;
    await this.store.touch(session.id, now);
  }

  /** The client ended the session (DELETE): closed in the store, so every process refuses it. */
  async deleted(session: McpSession): Promise<void> {
    await this.store.close(session.id, "deleted by the client", this.now());
    this.#closeLocal(session, "deleted by the client");
  }

  /** Closes the local copies the store no longer has live (closed or idle, by any process). */
  async check(): Promise<void> {
    // One check at a time: a slow database must not pile them up.
    if (this.#sessions.size === 0 || this.#checking) return;
    this.#checking = true;
    const now = this.now();
    try {
      const dead = await this.store.dead([...this.#sessions.keys()], this.settings().sessionIdleMs, now);
      for (const session of [...this.#sessions.values()]) {
        if (dead.has(session.id)) this.#closeLocal(session, "closed or idle");
        else session.checkedAt = Math.max(session.checkedAt, now);
      }
    } catch (error) {
      // The next request of each session asks the store again; nothing is trusted longer meanwhile.
      this.logger.warn({ err: error }, "MCP sessions: could not check the local sessions");
    } finally {
      this.#checking = false;
    }
  }

  /** Closes idle sessions in the store (for every process) and prunes old closed rows. */
  async sweep(): Promise<void> {
    const now = this.now();
    try {
      const { closed, pruned } = await this.store.sweep(this.settings().sessionIdleMs, now - PRUNE_AFTER_MS, now);
      if (closed + pruned > 0) this.logger.info({ closed, pruned }, "MCP sessions swept");
    } catch (error) {
      this.logger.warn({ err: error }, "MCP sessions: the sweep failed");
    }
  }

  /** Shuts this process's copies and servers down; the sessions stay in the store for the other processes. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const timer of this.#timers) clearInterval(timer);
    for (const session of [...this.#sessions.values()]) this.#closeLocal(session, "shutdown");
    await this.pool.close();
  }

  #live(stored: StoredMcpSession, now: number): boolean {
    return stored.closedAt === null && stored.lastUsedAt >= now - this.settings().sessionIdleMs;
  }

  async #rebuild(stored: StoredMcpSession, principal: Principal): Promise<McpSession | null> {
    const session = this.#local(stored.id, principal, 0);
    try {
      await replayInitialize(session.transport, JSON.parse(stored.initializeParams) as Record<string, unknown>);
    } catch (error) {
      this.#closeLocal(session, "could not be rebuilt");
      throw error;
    }
    session.checkedAt = this.now();
    return this.#sessions.get(stored.id) === session ? session : null;
  }

  /** A local copy for the session `id` (registered at once), its transport answering with that id. */
  #local(id: string, principal: Principal, touchedAt: number): McpSession {
    const now = this.now();
    const session: McpSession = {
      id,
      keyId: principal.key.id,
      principal,
      lastUsedAt: now,
      touchedAt,
      checkedAt: now,
      transport: new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: () => id }),
      server: createSessionServer({ pool: this.pool, services: this.services(), principal: () => session.principal }),
    };
    session.transport.onclose = () => {
      if (this.#sessions.get(id) === session) this.#sessions.delete(id);
    };
    this.#makeRoom();
    this.#sessions.set(id, session);
    // Connecting only wires the handlers to the transport (start() of this transport does nothing).
    void session.server.connect(session.transport).catch(() => undefined);
    return session;
  }

  #makeRoom(): void {
    if (this.#sessions.size < MAX_SESSIONS) return;
    const oldest = [...this.#sessions.values()].sort((a, b) => a.lastUsedAt - b.lastUsedAt).slice(0, this.#sessions.size - MAX_SESSIONS + 1);
    for (const session of oldest) this.#closeLocal(session, "this process's copy limit");
  }

  #closeLocal(session: McpSession, reason: string): void {
    if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id);
    this.logger.info({ mcp_session_key: session.keyId, reason }, "MCP session closed in this process");
    void session.server.close().catch(() => undefined);
  }

  /** Tells every local session that the lists changed (on its GET stream, when the client keeps one open here). */
  #listsChanged(): void {
    for (const session of this.#sessions.values()) {
      void session.server.sendToolListChanged().catch(() => undefined);
      void session.server.sendPromptListChanged().catch(() => undefined);
      void session.server.sendResourceListChanged().catch(() => undefined);
    }
  }
}

/** How often a process writes a session's last use: a tenth of the idle time, at most MAX_TOUCH_MS. */
export function touchEveryMs(idleMs: number): number {
  return Math.min(MAX_TOUCH_MS, Math.floor(idleMs / 10));
}
