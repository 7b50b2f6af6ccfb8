// MCP servers in the live catalog (docs/decisions/0051-mcp-servers-in-the-live-catalog.md): the
// document's `mcp_servers` section, keyed by server name, written like a config file server except
// that a header's or an environment variable's value is never in the document: the document says
// only that it is set (and its last four characters when it is long enough to spare them), and the
// value is kept encrypted in mcp_server_secrets (catalog-store.ts). An edit's plain values are taken
// out here before the document is checked. The MCP gateway serves the file's servers and then the
// catalog's; a catalog server named like one of the file's is refused when written and, should the
// file gain that name later, not served (the file wins). Stdio servers only with
// mcp.allow_catalog_stdio: a command the gateway runs is code execution, for the file's owner to allow.
import { z } from "zod";
import { GatewayError } from "../errors/catalogue.js";
import { mcpSecretKey } from "../store/catalog-store.js";
import { MAX_MCP_SERVERS, MAX_MCP_VALUE_LENGTH, mcpEnvName, mcpHeaderName, mcpServerSchema } from "./feature-schemas.js";
import type { ConfigIssue } from "./gateway-config.js";
import { mcpServerSettingsOf, type McpServerEntry, type McpServerSettings, type McpSettings } from "./mcp-settings.js";
import type { ConfigFile } from "./schema.js";

/** A value kept encrypted beside the catalog: the document's whole record of it. */
export const storedValueSchema = z.strictObject({ set: z.literal(true), last4: z.string().max(4).optional() });
export type StoredValue = z.infer<typeof storedValueSchema>;

const shape = mcpServerSchema.shape;
/** A live catalog MCP server as the document writes it (its name is its key in `mcp_servers`). */
export const catalogMcpServerSchema = z.strictObject({
  url: shape.url,
  headers: z.record(mcpHeaderName, storedValueSchema).optional(),
  command: shape.command,
  args: shape.args,
  env: z.record(mcpEnvName, storedValueSchema).optional(),
  price_per_call_usd: shape.price_per_call_usd,
  connect_timeout_ms: shape.connect_timeout_ms.unwrap().optional(),
  call_timeout_ms: shape.call_timeout_ms.unwrap().optional(),
  disabled: shape.disabled,
});
export type CatalogMcpServer = z.infer<typeof catalogMcpServerSchema>;
export const catalogMcpServersSchema = z.record(shape.name, catalogMcpServerSchema);

type ValueKind = "header" | "env";
const FIELDS: ReadonlyArray<{ field: "headers" | "env"; kind: ValueKind }> = [
  { field: "headers", kind: "header" },
  { field: "env", kind: "env" },
];
/** Shorter values show no characters at all: four would be too much of them. */
const LAST4_FROM_LENGTH = 12;

class EntryIssue extends Error {
  constructor(readonly issue: ConfigIssue) {
    super(issue.message);
  }
}

/** The catalog servers' problems with the running file: a name the file uses, stdio not allowed, a bad URL or price. */
export function checkCatalogMcpServers(servers: Readonly<Record<string, CatalogMcpServer>> | undefined, file: ConfigFile): ConfigIssue[] {
  const entries = Object.entries(servers ?? {});
  const issues: ConfigIssue[] = [];
  if (entries.length + file.mcp.servers.length > MAX_MCP_SERVERS)
    issues.push({ field: "mcp_servers", message: `at most ${MAX_MCP_SERVERS} MCP servers with the config file's ${file.mcp.servers.length}` });
  const fileNames = new Set(file.mcp.servers.map((s) => s.name));
  for (const [name, server] of entries) {
    const at = `mcp_servers.${name}`;
    if (fileNames.has(name)) issues.push({ field: at, message: `the config file's mcp section has a server named ${name}; choose another name` });
    if (server.command !== undefined && !file.mcp.allow_catalog_stdio)
      issues.push({ field: `${at}.command`, message: "stdio servers can be added here only when the config file sets mcp.allow_catalog_stdio: true" });
    try {
      mcpServerSettingsOf(
        entryOf(name, server, () => "stored"),
        at,
        failWith,
      );
    } catch (error) {
      if (!(error instanceof EntryIssue)) throw error;
      issues.push(error.issue);
    }
  }
  return issues;
}

/**
 * The MCP settings to serve: the file's (`fromFile`) and then the catalog's enabled servers with their
 * stored values (keys by mcpSecretKey); a catalog server that cannot be served is left out, with why.
 */
export function mcpSettingsWithCatalog(
  fromFile: McpSettings,
  file: ConfigFile,
  servers: Readonly<Record<string, CatalogMcpServer>> | undefined,
  secrets: ReadonlyMap<string, string>,
): McpSettings {
  const fileNames = new Set(file.mcp.servers.map((s) => s.name));
  const served: McpServerSettings[] = [];
  const notServed: Array<{ name: string; reason: string }> = [];
  for (const [name, server] of Object.entries(servers ?? {})) {
    if (server.disabled === true) continue;
    if (fileNames.has(name)) {
      notServed.push({ name, reason: "the config file has a server of this name, and the file's is served" });
      continue;
    }
    if (server.command !== undefined && !file.mcp.allow_catalog_stdio) {
      notServed.push({ name, reason: "a stdio server from the live catalog needs mcp.allow_catalog_stdio: true in the config file" });
      continue;
    }
    try {
      const settings = mcpServerSettingsOf(
        entryOf(name, server, (kind, valueName) => {
          const value = secrets.get(mcpSecretKey(name, kind, valueName));
          if (value === undefined)
            throw new EntryIssue({ field: `mcp_servers.${name}`, message: `its ${kind} ${valueName} has no stored value (a rollback does not restore values): set it again` });
          return value;
        }),
        `mcp_servers.${name}`,
        failWith,
      );
      if (settings !== null) served.push(settings);
    } catch (error) {
      if (!(error instanceof EntryIssue)) throw error;
      notServed.push({ name, reason: `${error.issue.field}: ${error.issue.message}` });
    }
  }
  return { ...fromFile, servers: [...fromFile.servers, ...served], notServed };
}

/** A change's stored values: each wanted name with its new value, or null to keep the stored one. */
export type StoredValueWrites = Array<{ kind: ValueKind; name: string; value: string | null }>;

/**
 * Takes an MCP server change's plain header and environment values out of it: each becomes a
 * stored-value record in the entry (`{"set": true}` as given back keeps the stored value; a name
 * without one is refused). `valuesOf` gives, for the entry after the edit, every value to write.
 */
export function withoutPlainValues(
  entry: Record<string, unknown>,
  before: Record<string, unknown> | null,
): { entry: Record<string, unknown>; valuesOf: (after: Record<string, unknown> | null) => StoredValueWrites } {
  const given = new Map<string, string>();
  const out: Record<string, unknown> = { ...entry };
  for (const { field, kind } of FIELDS) {
    const values = entry[field];
    if (values === null || typeof values !== "object" || Array.isArray(values)) continue;
    const stored = (before?.[field] ?? {}) as Record<string, StoredValue>;
    const records: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(values as Record<string, unknown>)) {
      if (typeof value === "string") {
        if (value.length > MAX_MCP_VALUE_LENGTH)
          throw new GatewayError("invalid_request", `${field}.${name}: at most ${MAX_MCP_VALUE_LENGTH} characters.`, { param: `${field}.${name}` });
        given.set(`${kind}:${name}`, value);
        records[name] = value.length >= LAST4_FROM_LENGTH ? { set: true, last4: value.slice(-4) } : { set: true };
      } else if (typeof value === "object" && value !== null && (value as { set?: unknown }).set === true) {
        const kept = stored[name];
        if (kept === undefined) throw new GatewayError("invalid_request", `${field}.${name}: no value is stored to keep; give the value.`, { param: `${field}.${name}` });
        records[name] = kept;
      } else {
        throw new GatewayError("invalid_request", `${field}.${name}: give the value as a string (or {"set": true} to keep the stored one).`, { param: `${field}.${name}` });
      }
    }
    out[field] = records;
  }
  const valuesOf = (after: Record<string, unknown> | null): StoredValueWrites =>
    after === null ? [] : FIELDS.flatMap(({ field, kind }) => Object.keys(after[field] ?? {}).map((name) => ({ kind, name, value: given.get(`${kind}:${name}`) ?? null })));
  return { entry: out, valuesOf };
}

/** A catalog server as the file's schema reads one, its values from `valueOf`. */
function entryOf(name: string, server: CatalogMcpServer, valueOf: (kind: ValueKind, name: string) => string): McpServerEntry {
  const values = (records: Record<string, StoredValue> | undefined, kind: ValueKind) =>
    records === undefined ? undefined : Object.fromEntries(Object.keys(records).map((key) => [key, valueOf(kind, key)]));
  const entry: McpServerEntry = {
    name,
    connect_timeout_ms: server.connect_timeout_ms ?? shape.connect_timeout_ms.parse(undefined),
    call_timeout_ms: server.call_timeout_ms ?? shape.call_timeout_ms.parse(undefined),
  };
  if (server.url !== undefined) entry.url = server.url;
  const headers = values(server.headers, "header");
  if (headers !== undefined) entry.headers = headers;
  if (server.command !== undefined) entry.command = server.command;
  if (server.args !== undefined) entry.args = server.args;
  const env = values(server.env, "env");
  if (env !== undefined) entry.env = env;
  if (server.price_per_call_usd !== undefined) entry.price_per_call_usd = server.price_per_call_usd;
  if (server.disabled !== undefined) entry.disabled = server.disabled;
  return entry;
}

function failWith(field: string, message: string): never {
  throw new EntryIssue({ field, message });
}
