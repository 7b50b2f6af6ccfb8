import { describe, expect, it } from "vitest";
import { mcpSecretKey } from "../store/catalog-store.js";
import { checkCatalogMcpServers, mcpSettingsWithCatalog, withoutPlainValues, type CatalogMcpServer } from "./mcp-catalog.js";
import { mcpSettingsFrom } from "./mcp-settings.js";
import { configFileSchema } from "./schema.js";

const fail = (field: string, message: string): never => {
  throw new Error(`${field}: ${message}`);
};
const fileOf = (mcp: unknown) => configFileSchema.parse({ mcp });
const FILE = fileOf({ servers: [{ name: "files", url: "https://files.example.com/mcp" }] });
const stored = { set: true as const };

describe("MCP servers of the live catalog", () => {
  it("serves the file's servers first, then the catalog's with their stored values", () => {
    const servers: Record<string, CatalogMcpServer> = { tickets: { url: "https://t.example.com/mcp", headers: { Authorization: stored }, price_per_call_usd: "0.01" } };
    const values = new Map([[mcpSecretKey("tickets", "header", "Authorization"), "Bearer secret-value-123"]]);
    const settings = mcpSettingsWithCatalog(mcpSettingsFrom(FILE.mcp, fail), FILE, servers, values);
    expect(settings.servers.map((s) => s.name)).toEqual(["files", "tickets"]);
    const tickets = settings.servers[1]!;
    expect(tickets.transport).toMatchObject({ kind: "http", headers: { Authorization: "Bearer secret-value-123" } });
    expect(tickets.pricePerCall).toBe(10_000_000n);
    expect(tickets.connectTimeoutMs).toBe(15_000);
    expect(settings.notServed).toEqual([]);
  });

  it("leaves out, with why, a name the file uses, stdio without allow_catalog_stdio and a value not stored", () => {
    const servers: Record<string, CatalogMcpServer> = {
      files: { url: "https://other.example.com/mcp" },
      local: { command: "node", args: ["server.js"] },
      lost: { url: "https://lost.example.com/mcp", headers: { Authorization: stored } },
      off: { url: "https://off.example.com/mcp", disabled: true },
    };
    const settings = mcpSettingsWithCatalog(mcpSettingsFrom(FILE.mcp, fail), FILE, servers, new Map());
    expect(settings.servers.map((s) => s.name)).toEqual(["files"]);
    expect(settings.servers[0]!.transport).toMatchObject({ url: new URL("https://files.example.com/mcp") });
    expect(settings.notServed.map((n) => n.name)).toEqual(["files", "local", "lost"]);
    expect(settings.notServed[2]!.reason).toMatch(/header Authorization has no stored value/);
    const allowed = fileOf({ allow_catalog_stdio: true });
    expect(mcpSettingsWithCatalog(mcpSettingsFrom(allowed.mcp, fail), allowed, { local: servers.local! }, new Map()).servers.map((s) => s.name)).toEqual(["local"]);
  });

  it("refuses, naming the field, a file server's name, stdio when not allowed, plain http off loopback and a bad price", () => {
    const issues = checkCatalogMcpServers(
      {
        files: { url: "https://x.example.com/" },
        local: { command: "node" },
        plain: { url: "http://x.example.com/" },
        priced: { url: "https://x.example.com/", price_per_call_usd: "lots" },
        loop: { url: "http://127.0.0.1:3000/mcp" },
      },
      FILE,
    );
    expect(issues.map((i) => i.field)).toEqual(["mcp_servers.files", "mcp_servers.local.command", "mcp_servers.plain.url", "mcp_servers.priced.price_per_call_usd"]);
  });

  it("takes plain values out of a change: a new value is written, {set: true} keeps the stored one, the rest are deleted", () => {
    const before = { url: "https://x.example.com/", headers: { Authorization: { set: true, last4: "abcd" }, "X-Old": stored } };
    const { entry, valuesOf } = withoutPlainValues({ headers: { Authorization: { set: true }, "X-Team": "ml" } }, before);
    expect(entry.headers).toEqual({ Authorization: { set: true, last4: "abcd" }, "X-Team": { set: true } });
    expect(valuesOf({ ...before, ...entry })).toEqual([
      { kind: "header", name: "Authorization", value: null },
      { kind: "header", name: "X-Team", value: "ml" },
    ]);
    expect(withoutPlainValues({ env: { TOKEN: "a-long-secret-value-9876" } }, null).entry.env).toEqual({ TOKEN: { set: true, last4: "9876" } });
    expect(() => withoutPlainValues({ headers: { Authorization: { set: true } } }, null)).toThrow(/no value is stored to keep/);
    expect(() => withoutPlainValues({ headers: { Authorization: 42 } }, null)).toThrow(/give the value as a string/);
  });
});
