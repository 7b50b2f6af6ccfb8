// The `mcp` section as the MCP gateway (src/mcp) uses it: each server's transport (a remote URL with
// its headers, or a stdio command), its per-call price in nano-USD and its timeouts. A reload swaps
// in new settings; the gateway restarts only the servers whose `fingerprint` changed.
import { createHash } from "node:crypto";
import { parseUsd, type Nano } from "../core/money.js";
import type { ConfigFile } from "./schema.js";
import { isLoopback } from "./oidc-settings.js";

export type McpTransportSettings =
  { kind: "http"; url: URL; headers: Readonly<Record<string, string>> } | { kind: "stdio"; command: string; args: readonly string[]; env: Readonly<Record<string, string>> };

export interface McpServerSettings {
  name: string;
  transport: McpTransportSettings;
  /** Charged per successful tools/call; null: free. */
  pricePerCall: Nano | null;
  connectTimeoutMs: number;
  callTimeoutMs: number;
  /** A hash of the transport and connect timeout: equal fingerprints need no restart on a reload (a price or call timeout applies at once). */
  fingerprint: string;
}

export interface McpSettings {
  maxSessionsPerKey: number;
  sessionIdleMs: number;
  /** The enabled servers: the file's in its order, then the live catalog's (mcp-catalog.ts). */
  servers: readonly McpServerSettings[];
  /** The live catalog's servers that are not served, each with why (logged by the MCP gateway). */
  notServed: ReadonlyArray<{ name: string; reason: string }>;
}

/** The most a single call may be priced at: 1,000 USD. */
const MAX_PRICE_PER_CALL: Nano = 1_000n * 1_000_000_000n;

/** One server's entry as the file's schema reads it (a catalog entry is made into one: mcp-catalog.ts). */
export type McpServerEntry = ConfigFile["mcp"]["servers"][number];

/** The settings (an empty server list without an `mcp` section); `fail` names the field of the first error. */
export function mcpSettingsFrom(section: ConfigFile["mcp"], fail: (field: string, message: string) => never): McpSettings {
  const names = new Set<string>();
  const servers: McpServerSettings[] = [];
  for (const [i, entry] of section.servers.entries()) {
    const at = `mcp.servers[${i}]`;
    if (names.has(entry.name)) fail(`${at}.name`, `"${entry.name}" is used by another server`);
    names.add(entry.name);
    const server = mcpServerSettingsOf(entry, at, fail);
    if (server !== null) servers.push(server);
  }
  return { maxSessionsPerKey: section.max_sessions_per_key, sessionIdleMs: section.session_idle_s * 1000, servers, notServed: [] };
}

/** One server's settings, checked (`at` prefixes the failing field); null when it is disabled. */
export function mcpServerSettingsOf(entry: McpServerEntry, at: string, fail: (field: string, message: string) => never): McpServerSettings | null {
  let transport: McpTransportSettings;
  if (entry.url !== undefined) {
    if (entry.command !== undefined || entry.args !== undefined || entry.env !== undefined) fail(at, "give either url (with headers) or command (with args and env), not both");
    const url = new URL(entry.url);
    if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.hostname))) fail(`${at}.url`, "must be an https URL (http only for a loopback address)");
    transport = { kind: "http", url, headers: entry.headers ?? {} };
  } else if (entry.command !== undefined) {
    if (entry.headers !== undefined) fail(`${at}.headers`, "headers are for a remote server (url); give a stdio server env instead");
    transport = { kind: "stdio", command: entry.command, args: entry.args ?? [], env: entry.env ?? {} };
  } else {
    return fail(at, "give url (a remote MCP server) or command (a stdio MCP server)");
  }
  let pricePerCall: Nano | null = null;
  if (entry.price_per_call_usd !== undefined) {
    const price = parseUsd(entry.price_per_call_usd);
    if (price === null || price < 0n || price > MAX_PRICE_PER_CALL)
      fail(`${at}.price_per_call_usd`, `"${entry.price_per_call_usd}" is not a USD amount from 0 to 1000 with at most 9 decimals`);
    pricePerCall = price === 0n ? null : price;
  }
  if (entry.disabled === true) return null;
  const settings = { name: entry.name, transport, pricePerCall, connectTimeoutMs: entry.connect_timeout_ms, callTimeoutMs: entry.call_timeout_ms };
  return { ...settings, fingerprint: fingerprintOf(settings) };
}

function fingerprintOf(settings: Omit<McpServerSettings, "fingerprint">): string {
  const text = JSON.stringify([settings.transport, settings.connectTimeoutMs], (_key, value: unknown) =>
    typeof value === "bigint" ? value.toString() : value instanceof URL ? value.href : value,
  );
  return createHash("sha256").update(text).digest("hex");
}
