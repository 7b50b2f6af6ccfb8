// Issue 27: the Claude Code and Codex one-liners of the first-start message, run as printed (through
// sh, with `claude` and `codex` on PATH) against a gateway serving only the built-in demo catalog,
// each complete a tool round trip: the demo calls a shell tool, the agent runs it and sends its
// result, and the demo's next answer says it got it. Sandboxed as every agent test (support.ts).
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { firstStartMessage } from "../../src/cli/first-start.js";
import { parseUsd } from "../../src/core/money.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { claudeBinary, codexLauncher, describeRun, isolatedEnv, recordGatewayRequests, runAgent, startProxyTrap, tempDir, type ProxyTrap, type SeenRequest } from "./support.js";

const RUN_TIMEOUT_MS = 90_000;
const TEST_TIMEOUT_MS = RUN_TIMEOUT_MS + 15_000;

describe("the first-start agent lines against the demo models", () => {
  let gateway: TestGateway;
  let proxy: ProxyTrap;
  let seen: SeenRequest[];
  let message: string;
  let accountId: string;
  let bin: string;

  beforeAll(async () => {
    // A config without providers: the demo catalog is all there is.
    gateway = await startGateway("server: {}\n");
    seen = recordGatewayRequests(gateway.app.server.server);
    proxy = await startProxyTrap();
    const { account, raw } = await gateway.createAccount({ balance: "5" });
    accountId = account.id;
    message = firstStartMessage(gateway.url, {
      email: "admin@localhost",
      password: "unused",
      accountId,
      apiKey: raw,
      demoCredit: parseUsd("5")!,
      demoModels: ["demo-chat", "demo-fast"],
    });
    // `claude` and `codex` as a newcomer's PATH would have them.
    bin = tempDir("agents-bin-");
    const claude = claudeBinary();
    if (claude) symlinkSync(claude, join(bin, "claude"));
    const codex = codexLauncher();
    if (codex) {
      writeFileSync(join(bin, "codex"), `#!/bin/sh\nexec "${process.execPath}" "${codex}" "$@"\n`);
      chmodSync(join(bin, "codex"), 0o755);
    }
  });
  afterAll(async () => {
    await gateway?.close();
    await proxy?.close();
  });

  function printedLine(label: string): string {
    const line = new RegExp(`^ {2}${label}: +(.+)$`, "m").exec(message)?.[1];
    expect(line, message).toBeDefined();
    return line!;
  }

  async function usageRows(): Promise<Array<{ model: string | null; cost_nano: bigint | number | string }>> {
    return gateway.app.ctx.store.handle.db.selectFrom("ledger").select(["model", "cost_nano"]).where("account_id", "=", accountId).where("kind", "=", "usage").execute();
  }

  /** Runs a printed line through sh; `env` gives the agent-specific sandbox variables for a private HOME. */
  async function runPrinted(label: string, env: (home: string) => Record<string, string>) {
    const home = tempDir("demo-agent-home-");
    const before = (await usageRows()).length;
    seen.length = 0;
    const base = isolatedEnv(home, proxy);
    const run = await runAgent("sh", ["-c", printedLine(label)], {
      env: { ...base, PATH: `${bin}:${base.PATH}`, ...env(home) },
      cwd: tempDir("demo-agent-cwd-"),
      timeoutMs: RUN_TIMEOUT_MS,
    });
    const context = `gateway saw: ${JSON.stringify(seen.map((s) => `${s.method} ${s.url} -> ${s.status}`))}\nproxy trap: ${JSON.stringify(proxy.attempts)}`;
    return { run, context, billed: (await usageRows()).slice(before) };
  }

  it(
    "Claude Code: the printed line completes a tool round trip on demo-chat, billed",
    async () => {
      expect(claudeBinary(), "the @anthropic-ai/claude-code native binary is missing: run npm install").toBeTruthy();
      const { run, context, billed } = await runPrinted("Claude Code", (home) => {
        mkdirSync(join(home, ".claude"), { recursive: true });
        return { CLAUDE_CONFIG_DIR: join(home, ".claude"), CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" };
      });
      expect(run.code, describeRun(run, context)).toBe(0);
      expect(run.stdout, describeRun(run, context)).toContain("That completes a tool round trip");
      expect(billed.filter((r) => r.model === "demo-chat").length, describeRun(run, context)).toBeGreaterThanOrEqual(2);
      for (const row of billed) expect(BigInt(row.cost_nano)).toBeGreaterThan(0n);
      expect(proxy.attempts).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "Codex: the printed line completes a shell tool round trip on demo-chat, billed",
    async () => {
      expect(codexLauncher(), "@openai/codex is missing: run npm install").toBeTruthy();
      const { run, context, billed } = await runPrinted("Codex", (home) => {
        mkdirSync(join(home, ".codex"), { recursive: true });
        // Codex's own traffic beyond the model (plugins, analytics), off as in codex.test.ts; the line's settings are the -c flags.
        writeFileSync(join(home, ".codex", "config.toml"), "[features]\nplugins = false\n\n[analytics]\nenabled = false\n");
        return { CODEX_HOME: join(home, ".codex") };
      });
      expect(run.code, describeRun(run, context)).toBe(0);
      expect(run.stdout, describeRun(run, context)).toContain("That completes a tool round trip");
      // The demo's call ran: its echo's output is what the tool result began with.
      expect(run.stdout + run.stderr, describeRun(run, context)).toContain("hello from the demo model");
      expect(billed.filter((r) => r.model === "demo-chat").length, describeRun(run, context)).toBeGreaterThanOrEqual(2);
      expect(proxy.attempts).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );
});
