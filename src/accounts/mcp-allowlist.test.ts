import { describe, expect, it } from "vitest";
import { validMcpAllowlist } from "./key-policy.js";
import { isMcpAllowlistEntry, mcpServerAllowed, mcpServerVisible, mcpToolAllowed, prefixedUri, splitPrefixedName, splitPrefixedUri } from "../core/mcp-names.js";

describe("MCP names and allowlists", () => {
  it("splits a presented name at the first __ and a resource URI at the server", () => {
    expect(splitPrefixedName("files__read__all")).toEqual({ server: "files", name: "read__all" });
    expect(splitPrefixedName("my-srv_2__get-sum")).toEqual({ server: "my-srv_2", name: "get-sum" });
    expect(splitPrefixedName("noprefix")).toBeNull();
    expect(splitPrefixedName("__x")).toBeNull();
    const uri = prefixedUri("docs", "demo://resource/{id}");
    expect(uri).toBe("mcp-gw://docs/demo://resource/{id}");
    expect(splitPrefixedUri(uri)).toEqual({ server: "docs", uri: "demo://resource/{id}" });
    expect(splitPrefixedUri("demo://x")).toBeNull();
  });

  it("allows a whole server or one tool; null allows everything", () => {
    const list = ["files", "notes__add"];
    expect(mcpToolAllowed(list, "files", "read")).toBe(true);
    expect(mcpToolAllowed(list, "notes", "add")).toBe(true);
    expect(mcpToolAllowed(list, "notes", "fail")).toBe(false);
    expect(mcpServerAllowed(list, "notes")).toBe(false);
    expect(mcpServerVisible(list, "notes")).toBe(true);
    expect(mcpServerVisible(list, "other")).toBe(false);
    expect(mcpToolAllowed(null, "any", "thing")).toBe(true);
  });

  it("validates entries: a server name or server__tool, at least one, bounded, de-duplicated", () => {
    expect(isMcpAllowlistEntry("files")).toBe(true);
    expect(isMcpAllowlistEntry("files__read.v2")).toBe(true);
    expect(isMcpAllowlistEntry("Files")).toBe(false);
    expect(isMcpAllowlistEntry("files__")).toBe(false);
    expect(isMcpAllowlistEntry("a b")).toBe(false);
    expect(validMcpAllowlist(["files", "files"], "allowed_mcp")).toEqual(["files"]);
    expect(() => validMcpAllowlist([], "allowed_mcp")).toThrow(/at least one/);
    expect(() => validMcpAllowlist(["bad name"], "allowed_mcp")).toThrow(/neither an MCP server name nor server__tool/);
    expect(() =>
      validMcpAllowlist(
        Array.from({ length: 101 }, (_, i) => `s${i}`),
        "allowed_mcp",
      ),
    ).toThrow(/at most 100/);
  });
});
