// Claude Code (`claude -p`, headless) with an MCP config pointing at the gateway's /mcp (the gateway
// key in the Authorization header): the mock Anthropic upstream answers with a tool_use of the
// gateway's prefixed MCP tool as Claude Code names it (mcp__<config name>__<server>__<tool>), Claude
// Code calls it through /mcp, the tool (the "everything" server over stdio) answers, and the call is
// in the gateway's request log.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { anthropicStream, type MockUpstream } from "../support/mock-upstream.js";
import type { TestGateway } from "../support/gateway.js";
import { EVERYTHING_SERVER } from "../support/mcp-servers.js";
import { claudeBinary, describeRun, isolatedEnv, runAgent, tempDir, useAgentRig, type ProxyTrap, type SeenRequest } from "./support.js";

const RUN_TIMEOUT_MS = 90_000;

interface AnthropicBlock {
  type: string;
  tool_use_id?: string;
  content?: unknown;
}

describe("Claude Code calls an MCP tool through the gateway's /mcp", () => {
  const binary = claudeBinary();
  let mock: MockUpstream;
  let gateway: TestGateway;
  let proxy: ProxyTrap;
  let seen: SeenRequest[];
  let key: string;
  // A top-level mcp section after the models (mockConfig places `extra` right before `tiers:`).
  useAgentRig((rig) => ({ mock, gateway, proxy, seen, key } = rig), {
    tier: "premium",
    extraModels: `mcp:
  servers:
    - name: everything
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(EVERYTHING_SERVER)}, "stdio"]
`,
  });

  it(
    "runs the tool_use of everything__echo through /mcp and answers with its result",
    async () => {
      expect(binary, "the @anthropic-ai/claude-code native binary is missing: run npm install").toBeTruthy();
      const tool = "mcp__gw__everything__echo";
      mock.handler = (req, res) => {
        const last = (req.body.messages as Array<{ role: string; content: unknown }>).at(-1)!;
        const results = Array.isArray(last.content) ? (last.content as AnthropicBlock[]).filter((b) => b.type === "tool_result") : [];
        if (results.length === 0) {
          const input = JSON.stringify({ message: "MCP-7731" });
          return anthropicStream(res, ["Calling the tool."], { tool: { id: "toolu_mock_mcp_1", name: tool, fragments: [input.slice(0, 8), input.slice(8)] } });
        }
        return anthropicStream(res, ["The tool said ", "MCP-7731."]);
      };
      const home = tempDir("claude-home-");
      mkdirSync(join(home, ".claude"), { recursive: true });
      const mcpConfig = join(home, "mcp.json");
      writeFileSync(mcpConfig, JSON.stringify({ mcpServers: { gw: { type: "http", url: `${gateway.url}/mcp`, headers: { Authorization: `Bearer ${key}` } } } }));
      const env: Record<string, string> = {
        ...isolatedEnv(home, proxy),
        ANTHROPIC_BASE_URL: gateway.url,
        ANTHROPIC_API_KEY: key,
        CLAUDE_CONFIG_DIR: join(home, ".claude"),
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_AUTOUPDATER: "1",
        ANTHROPIC_MODEL: "claude-mock",
        ANTHROPIC_SMALL_FAST_MODEL: "claude-mock",
        ANTHROPIC_DEFAULT_HAIKU_MODEL: "claude-mock",
        ANTHROPIC_DEFAULT_SONNET_MODEL: "claude-mock",
        ANTHROPIC_DEFAULT_OPUS_MODEL: "claude-mock",
        CLAUDE_CODE_MAX_OUTPUT_TOKENS: "4096",
      };
      const args = [
        "-p",
        "Echo MCP-7731 with the tool.",
        "--output-format",
        "json",
        "--no-session-persistence",
        "--mcp-config",
        mcpConfig,
        "--strict-mcp-config",
        "--allowedTools",
        tool,
      ];
      const run = await runAgent(binary!, args, { env, cwd: tempDir("claude-cwd-"), timeoutMs: RUN_TIMEOUT_MS });
      const context = [
        `gateway saw: ${JSON.stringify(seen.map((s) => `${s.method} ${s.url} -> ${s.status}`))}`,
        `upstream saw: ${JSON.stringify(mock.requests.map((r) => `${r.method} ${r.url}`))}`,
        `proxy trap: ${JSON.stringify(proxy.attempts)}`,
      ].join("\n");
      expect(run.code, describeRun(run, context)).toBe(0);
      const out = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as { result?: string; is_error?: boolean };
      expect(out, describeRun(run, context)).toMatchObject({ result: "The tool said MCP-7731.", is_error: false });

      // The tool's result went back to the model.
      const upstream = mock.requests.filter((r) => r.url.startsWith("/v1/messages"));
      const blocks = (upstream.at(-1)!.body.messages as Array<{ content: unknown }>).flatMap((m) => (Array.isArray(m.content) ? (m.content as AnthropicBlock[]) : []));
      const toolResult = blocks.find((b) => b.type === "tool_result" && b.tool_use_id === "toolu_mock_mcp_1");
      expect(JSON.stringify(toolResult?.content), context).toContain("Echo: MCP-7731");

      // Claude Code offered the gateway's tools to the model under its MCP names.
      const offered = (upstream[0]!.body.tools as Array<{ name: string }> | undefined)?.map((t) => t.name) ?? [];
      expect(offered, context).toContain(tool);

      // The call is in the gateway's request log (no arguments kept).
      await gateway.app.ctx.pipeline.requestLog!.flush();
      const rows = await gateway.app.ctx.store.db.selectFrom("request_log").selectAll().where("route", "=", "mcp/tools/call").execute();
      expect(rows.map((r) => [r.provider, r.model, Number(r.status)])).toEqual([["everything", "echo", 200]]);
      expect(JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v))).not.toContain("MCP-7731");
      expect(
        seen.some((s) => s.url === "/mcp" && s.method === "POST"),
        context,
      ).toBe(true);
      expect(proxy.attempts).toEqual([]);
    },
    RUN_TIMEOUT_MS + 15_000,
  );
});
