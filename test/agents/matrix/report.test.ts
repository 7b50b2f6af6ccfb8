import { describe, expect, it } from "vitest";
import { comparable, regressions, renderMarkdown, type Matrix, type McpMatrix } from "./report.js";

function matrix(plain: "pass" | "fail", reasoning: "pass" | "fail", generated = "2026-01-01"): Matrix {
  return {
    generated,
    clients: [{ id: "codex", name: "Codex CLI", packages: { "@openai/codex": "0.169.0" } }],
    upstream_types: [{ id: "gemini", name: "Google Gemini" }],
    features: [
      { id: "plain", name: "Plain turn" },
      { id: "reasoning", name: "Reasoning" },
    ],
    results: { codex: { gemini: { plain: { status: plain }, reasoning: { status: reasoning } } } },
  };
}

function mcpPart(call: "pass" | "fail"): McpMatrix {
  return {
    clients: [{ id: "mcp-sdk", name: "MCP SDK client", packages: { "@modelcontextprotocol/sdk": "1.2.3" } }],
    server_kinds: [{ id: "stdio", name: "stdio server" }],
    features: [
      { id: "tool-call", name: "Tool called" },
      { id: "prompts", name: "Prompts" },
    ],
    results: { "mcp-sdk": { stdio: { "tool-call": { status: call }, prompts: { status: "n/a", reason: "No prompts here." } } } },
  };
}

describe("compatibility matrix report", () => {
  it("counts a cell that passed and fails now as a regression, and a new pass as none", () => {
    expect(regressions(matrix("pass", "fail"), matrix("fail", "pass"))).toEqual(["codex × gemini × plain: was pass, now fail"]);
    expect(regressions(matrix("fail", "fail"), matrix("fail", "pass"))).toEqual([]);
  });

  it("ignores the date when comparing, not a status", () => {
    expect(comparable(matrix("pass", "fail", "2026-01-01"))).toBe(comparable(matrix("pass", "fail", "2027-05-05")));
    expect(comparable(matrix("pass", "fail"))).not.toBe(comparable(matrix("pass", "pass")));
  });

  it("renders the versions, the table and the n/a reasons", () => {
    const m = matrix("pass", "fail");
    m.results.codex!.gemini!.reasoning = { status: "n/a", reason: "Not a thing here." };
    const md = renderMarkdown(m);
    expect(md).toContain("`@openai/codex@0.169.0`");
    expect(md).toContain("| Codex CLI | pass | n/a [1] |");
    expect(md).toContain("1. Not a thing here.");
  });

  it("counts a lost MCP cell as a regression, and renders the MCP part with its notes numbered after the others", () => {
    const before = { ...matrix("pass", "pass"), mcp: mcpPart("pass") };
    expect(regressions(before, { ...matrix("pass", "pass"), mcp: mcpPart("fail") })).toEqual(["mcp-sdk × mcp stdio × tool-call: was pass, now fail"]);
    expect(regressions(before, matrix("pass", "pass"))).toEqual(["mcp-sdk × mcp stdio × tool-call: was pass, now missing"]);
    expect(regressions(matrix("pass", "pass"), before)).toEqual([]);

    const m = { ...matrix("pass", "fail"), mcp: mcpPart("pass") };
    m.results.codex!.gemini!.reasoning = { status: "n/a", reason: "Not a thing here." };
    const md = renderMarkdown(m);
    expect(md).toContain("## MCP gateway");
    expect(md).toContain("`@modelcontextprotocol/sdk@1.2.3`");
    expect(md).toContain("### MCP server: stdio server (`stdio`)");
    expect(md).toContain("| Client | Tool called | Prompts |");
    expect(md).toContain("| MCP SDK client | pass | n/a [2] |");
    expect(md).toContain("2. No prompts here.");
    expect(renderMarkdown(matrix("pass", "pass"))).not.toContain("MCP");
  });
});
