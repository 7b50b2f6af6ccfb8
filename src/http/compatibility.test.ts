import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compatibilitySummary, loadCompatibilitySummary } from "./compatibility.js";

const matrix = {
  generated: "2026-01-02",
  clients: [{ id: "codex", name: "Codex CLI", packages: { "@openai/codex": "0.169.0" } }],
  upstream_types: [
    { id: "anthropic", name: "Anthropic-native" },
    { id: "google-operations", name: "Google long-running operations" },
  ],
  features: [
    { id: "plain", name: "Plain turn" },
    { id: "reasoning", name: "Reasoning" },
  ],
  results: {
    codex: {
      anthropic: { plain: { status: "pass" }, reasoning: { status: "fail" } },
      "google-operations": { plain: { status: "n/a", reason: "video only" }, reasoning: { status: "n/a", reason: "video only" } },
    },
  },
};

describe("compatibility summary", () => {
  it("reduces the matrix to statuses, ids and totals", () => {
    expect(compatibilitySummary(JSON.stringify(matrix))).toEqual({
      generated: "2026-01-02",
      document: "docs/compatibility.md",
      clients: matrix.clients,
      upstream_types: ["anthropic", "google-operations"],
      features: ["plain", "reasoning"],
      results: { codex: { anthropic: { plain: "pass", reasoning: "fail" }, "google-operations": { plain: "n/a", reasoning: "n/a" } } },
      totals: { pass: 1, fail: 1, "n/a": 2 },
      mcp: null,
    });
  });

  it("summarises the MCP part apart, with totals of its own", () => {
    const mcp = {
      clients: [{ id: "mcp-sdk", name: "MCP SDK", packages: { "@modelcontextprotocol/sdk": "1.0.0" } }],
      server_kinds: [{ id: "stdio", name: "stdio" }],
      features: [
        { id: "tool-call", name: "Tool called" },
        { id: "prompts", name: "Prompts" },
      ],
      results: { "mcp-sdk": { stdio: { "tool-call": { status: "pass" }, prompts: { status: "n/a", reason: "no prompts" } } } },
    };
    const summary = compatibilitySummary(JSON.stringify({ ...matrix, mcp }));
    expect(summary?.mcp).toEqual({
      clients: mcp.clients,
      server_kinds: ["stdio"],
      features: ["tool-call", "prompts"],
      results: { "mcp-sdk": { stdio: { "tool-call": "pass", prompts: "n/a" } } },
      totals: { pass: 1, fail: 0, "n/a": 1 },
    });
    expect(summary?.totals).toEqual({ pass: 1, fail: 1, "n/a": 2 });
    expect(compatibilitySummary(JSON.stringify({ ...matrix, mcp: { ...mcp, results: { "mcp-sdk": { stdio: { prompts: { status: "maybe" } } } } } }))).toBeNull();
  });

  it("is null for a document that is not a matrix", () => {
    expect(compatibilitySummary("not json")).toBeNull();
    expect(compatibilitySummary(JSON.stringify({ ...matrix, results: { codex: { anthropic: { plain: { status: "maybe" } } } } }))).toBeNull();
    expect(compatibilitySummary(JSON.stringify({ ...matrix, generated: "x".repeat(41) }))).toBeNull();
    expect(loadCompatibilitySummary(new URL("./no-such-matrix.json", import.meta.url))).toBeNull();
  });

  it("reads the committed docs/compatibility.json", () => {
    const committed = JSON.parse(readFileSync(new URL("../../docs/compatibility.json", import.meta.url), "utf8")) as typeof matrix;
    const summary = loadCompatibilitySummary();
    expect(summary, "docs/compatibility.json does not match the schema the gateway reads").not.toBeNull();
    expect(summary!.generated).toBe(committed.generated);
    expect(Object.keys(summary!.results)).toEqual(committed.clients.map((c) => c.id));
  });
});
