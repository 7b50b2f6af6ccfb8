// The MCP gateway's names (ADR 0038): a tool or prompt `t` of server `s` is presented as `s__t`, a
// resource URI `u` of server `s` as `mcp-gw://s/u`; an allowlist entry is a server name (the whole
// server: its tools, prompts and resources) or a presented tool name (that tool alone). Server names
// have no "__" and do not end in "_" (config/schema.ts), so the first "__" of a name splits it.

export const MCP_NAME_SEPARATOR = "__";
export const MCP_RESOURCE_SCHEME = "mcp-gw://";
/** Entries of one allowlist at most (a key's or a workspace's). */
export const MAX_MCP_ALLOWLIST = 100;

const SERVER = "[a-z0-9]+(?:[-_][a-z0-9]+)*";
const ENTRY = new RegExp(`^${SERVER}(?:${MCP_NAME_SEPARATOR}[A-Za-z0-9_./-]{1,128})?$`);

export function prefixedName(server: string, name: string): string {
  return `${server}${MCP_NAME_SEPARATOR}${name}`;
}

/** The server and its own name of a presented tool or prompt name; null when it has no prefix. */
export function splitPrefixedName(presented: string): { server: string; name: string } | null {
  const at = presented.indexOf(MCP_NAME_SEPARATOR);
  if (at <= 0 || at + MCP_NAME_SEPARATOR.length >= presented.length) return null;
  return { server: presented.slice(0, at), name: presented.slice(at + MCP_NAME_SEPARATOR.length) };
}

export function prefixedUri(server: string, uri: string): string {
  return `${MCP_RESOURCE_SCHEME}${server}/${uri}`;
}

/** The server and the server's own URI of a presented resource URI; null when it is not one. */
export function splitPrefixedUri(presented: string): { server: string; uri: string } | null {
  if (!presented.startsWith(MCP_RESOURCE_SCHEME)) return null;
  const rest = presented.slice(MCP_RESOURCE_SCHEME.length);
  const slash = rest.indexOf("/");
  if (slash <= 0 || slash === rest.length - 1) return null;
  return { server: rest.slice(0, slash), uri: rest.slice(slash + 1) };
}

/** True when `entry` is a well-formed allowlist entry (a server name, or server__tool). */
export function isMcpAllowlistEntry(entry: string): boolean {
  return entry.length <= 200 && ENTRY.test(entry);
}

/** True when the list (null: no restriction) allows the whole server: its prompts and resources. */
export function mcpServerAllowed(list: readonly string[] | null, server: string): boolean {
  return list === null || list.includes(server);
}

/** True when the list (null: no restriction) allows the server's tool (the whole server, or this tool). */
export function mcpToolAllowed(list: readonly string[] | null, server: string, tool: string): boolean {
  return list === null || list.includes(server) || list.includes(prefixedName(server, tool));
}

/** True when the list allows anything of the server (a tool of it at least): the server is then listed at all. */
export function mcpServerVisible(list: readonly string[] | null, server: string): boolean {
  return list === null || list.some((entry) => entry === server || entry.startsWith(`${server}${MCP_NAME_SEPARATOR}`));
}
