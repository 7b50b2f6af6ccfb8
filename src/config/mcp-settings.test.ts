import { describe, expect, it } from "vitest";
import { mcpSettingsFrom } from "./mcp-settings.js";
import { configFileSchema } from "./schema.js";

const fail = (field: string, message: string): never => {
  throw new Error(`${field}: ${message}`);
};
const settings = (servers: unknown[]) => mcpSettingsFrom(configFileSchema.parse({ mcp: { servers } }).mcp, fail);

describe("the mcp section", () => {
  it("reads both transports, the price in nano-USD, and defaults", () => {
    const read = settings([
      { name: "files", command: "npx", args: ["-y", "server"], env: { TOKEN: "t" } },
      { name: "tickets", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer x" }, price_per_call_usd: "0.002" },
      { name: "off", url: "https://off.example.com/", disabled: true },
    ]);
    expect(read.servers.map((s) => s.name)).toEqual(["files", "tickets"]);
    expect(read.servers[1]!.pricePerCall).toBe(2_000_000n);
    expect(read.servers[0]!.pricePerCall).toBeNull();
    expect(read.servers[0]!.callTimeoutMs).toBe(60_000);
    expect(read.maxSessionsPerKey).toBe(16);
    expect(read.sessionIdleMs).toBe(1_800_000);
  });

  it("keeps the fingerprint when only the price or the call timeout changes", () => {
    const before = settings([{ name: "t", url: "https://a.example.com/", price_per_call_usd: "1" }]).servers[0]!;
    const priced = settings([{ name: "t", url: "https://a.example.com/", price_per_call_usd: "2", call_timeout_ms: 5000 }]).servers[0]!;
    const moved = settings([{ name: "t", url: "https://b.example.com/" }]).servers[0]!;
    expect(priced.fingerprint).toBe(before.fingerprint);
    expect(moved.fingerprint).not.toBe(before.fingerprint);
  });

  it("refuses duplicate names, both or neither transport, plain http off loopback, a bad price and a bad name", () => {
    expect(() =>
      settings([
        { name: "a", command: "x" },
        { name: "a", command: "y" },
      ]),
    ).toThrow(/mcp.servers\[1\].name: "a" is used by another server/);
    expect(() => settings([{ name: "a", command: "x", url: "https://a.example.com/" }])).toThrow(/either url .* or command/);
    expect(() => settings([{ name: "a" }])).toThrow(/give url .* or command/);
    expect(() => settings([{ name: "a", url: "http://a.example.com/" }])).toThrow(/https URL/);
    expect(() => settings([{ name: "a", command: "x", price_per_call_usd: "-1" }])).toThrow(/price_per_call_usd/);
    expect(() => settings([{ name: "a__b", command: "x" }])).toThrow();
    expect(() => settings([{ name: "A", command: "x" }])).toThrow();
  });
});
