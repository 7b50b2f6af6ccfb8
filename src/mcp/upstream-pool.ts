// The configured MCP servers (the config file's and the live catalog's), kept in step with the config: apply() starts the servers a config adds,
// stops the ones it removes, restarts only those whose transport changed (mcp-settings.ts fingerprint)
// and hands a changed price or call timeout to the running server. One pool per gateway process,
// shared by every session; stopped when the server closes.
import type { Logger } from "pino";
import type { McpServerSettings, McpSettings } from "../config/mcp-settings.js";
import { createScrubber, MIN_SECRET_LENGTH, type Scrubber } from "../pipeline/scrub.js";
import { UpstreamServer } from "./upstream-server.js";

export class UpstreamPool {
  #servers = new Map<string, UpstreamServer>();
  #applied: McpSettings | null = null;
  #scrubber: Scrubber = createScrubber({ secrets: [], hosts: [] });

  constructor(
    private readonly logger: Logger,
    /** A server's lists or state changed. */
    private readonly onChange: () => void,
  ) {}

  /** Removes every server's URL, headers and environment values from what reaches a client. */
  get scrubber(): Scrubber {
    return this.#scrubber;
  }

  get settings(): McpSettings | null {
    return this.#applied;
  }

  /**
   * Brings the running servers in line with `settings`; the same object again, or settings whose
   * servers are the same (a live catalog change of a model, say), is a no-op: no list_changed.
   */
  apply(settings: McpSettings): void {
    if (settings === this.#applied) return;
    const previous = this.#applied;
    this.#applied = settings;
    this.#logNotServed(previous, settings);
    if (previous !== null && sameServers(previous.servers, settings.servers)) return;
    this.#scrubber = scrubberOf(settings.servers);
    const wanted = new Map(settings.servers.map((server) => [server.name, server]));
    for (const [name, running] of this.#servers) {
      const next = wanted.get(name);
      if (next !== undefined && next.fingerprint === running.settings.fingerprint) {
        running.settings = next;
        continue;
      }
      this.#servers.delete(name);
      void running.stop();
      this.logger.info({ mcp_server: name, reason: next === undefined ? "removed" : "changed" }, "MCP server stopped by a config change");
    }
    for (const server of settings.servers) {
      if (this.#servers.has(server.name)) continue;
      const upstream = new UpstreamServer(server, this.#scrubber, this.logger, this.onChange);
      this.#servers.set(server.name, upstream);
      upstream.start();
    }
    // Config order, whatever was kept or started.
    this.#servers = new Map(settings.servers.map((server) => [server.name, this.#servers.get(server.name)!]));
    this.onChange();
  }

  /** Says once, when it starts, why a live catalog server is not served (mcp-catalog.ts). */
  #logNotServed(previous: McpSettings | null, settings: McpSettings): void {
    const before = new Set((previous?.notServed ?? []).map((entry) => JSON.stringify(entry)));
    for (const entry of settings.notServed)
      if (!before.has(JSON.stringify(entry))) this.logger.warn({ mcp_server: entry.name, reason: entry.reason }, "MCP server of the live catalog not served");
  }

  get(name: string): UpstreamServer | undefined {
    return this.#servers.get(name);
  }

  all(): UpstreamServer[] {
    return [...this.#servers.values()];
  }

  /** Waits for the servers still starting (each at most its connect timeout): a first listing lists them. */
  async settled(servers: readonly UpstreamServer[]): Promise<void> {
    await Promise.all(servers.filter((s) => s.state.kind === "starting").map((s) => s.settled()));
  }

  async close(): Promise<void> {
    const servers = this.all();
    this.#servers.clear();
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** The same servers in the same order, each with the same transport, price and call timeout. */
function sameServers(before: readonly McpServerSettings[], after: readonly McpServerSettings[]): boolean {
  return (
    before.length === after.length &&
    before.every((server, i) => {
      const other = after[i]!;
      return server.name === other.name && server.fingerprint === other.fingerprint && server.pricePerCall === other.pricePerCall && server.callTimeoutMs === other.callTimeoutMs;
    })
  );
}

/** The servers' credentials (header and environment values) and addresses, for createScrubber. */
function scrubberOf(servers: readonly McpServerSettings[]): Scrubber {
  const secrets: string[] = [];
  const hosts: string[] = [];
  for (const { transport } of servers) {
    if (transport.kind === "http") {
      // A header's value and its words ("Bearer <token>": the token alone too).
      for (const value of Object.values(transport.headers)) secrets.push(value, ...value.split(/\s+/));
      hosts.push(transport.url.href, transport.url.origin, transport.url.host);
      const rest = transport.url.pathname + transport.url.search;
      if (rest.length >= MIN_SECRET_LENGTH) secrets.push(rest);
    } else {
      secrets.push(...Object.values(transport.env), ...transport.args.filter((arg) => arg.length >= 16));
    }
  }
  return createScrubber({ secrets: secrets.filter((s) => s.length >= MIN_SECRET_LENGTH), hosts });
}
