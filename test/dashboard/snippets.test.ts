// The getting-started snippets (web/src/snippets.ts) run as rendered against a real gateway with the
// demo models: curl through bash, and the OpenAI SDK, Anthropic SDK and Vercel AI SDK snippets through
// tsx, each must get its answer (a 200). The Claude Code exports are run with `claude` swapped for
// `env` to read what they set; the Codex config is parsed as TOML; the Python snippets are parsed.
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayBaseUrl, gettingStartedSnippets, KEY_ENV, KEY_PLACEHOLDER, shellWord, type Snippet } from "../../web/src/snippets.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";

const run = promisify(execFile);
// Inside the repository, so that the snippets' imports (openai, ai, ...) resolve from node_modules.
const SCRATCH = join(process.cwd(), "test-output", "snippets");
const TSX = join(process.cwd(), "node_modules", ".bin", "tsx");

function byId(snippets: Snippet[], id: Snippet["id"]): string {
  const snippet = snippets.find((s) => s.id === id);
  if (!snippet) throw new Error(`no ${id} snippet`);
  return snippet.code;
}

// Python 3.11+ (tomllib) checks the TOML and Python snippets; without it those checks do not run.
const HAVE_PYTHON = await run("python3", ["-c", "import tomllib, ast"]).then(
  () => true,
  () => false,
);

describe.each(DATABASE_KINDS)("getting-started snippets against a gateway on %s", (kind) => {
  let gateway: TestGateway;
  let raw: string;
  let keyId: string;
  let snippets: Snippet[];

  beforeAll(async () => {
    // No providers: the demo models (demo-chat, demo-fast) answer in-process.
    gateway = await startGateway("{}\n", { kind });
    const created = await gateway.createAccount({ balance: "5" });
    raw = created.raw;
    keyId = created.key.id;
    const models = gateway.app.ctx.config.models;
    const model = (id: string) => ({ id, maxOutputTokens: models.get(id)!.maxOutputTokens });
    snippets = gettingStartedSnippets({ baseUrl: gatewayBaseUrl(null, gateway.url), rawKey: raw, model: model("demo-chat"), smallModel: model("demo-fast") });
    mkdirSync(SCRATCH, { recursive: true });
  });
  const scratchDirs: string[] = [];
  afterAll(async () => {
    await gateway?.close();
    for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
  });

  it("runs the curl snippet as rendered: a chat completion with the key it exports", async () => {
    const { stdout } = await run("bash", ["-c", byId(snippets, "curl")], { timeout: 20_000 });
    const body = JSON.parse(stdout) as { object: string; model: string; choices: Array<{ message: { content: string } }> };
    expect(body.object).toBe("chat.completion");
    expect(body.model).toBe("demo-chat");
    expect(body.choices[0]!.message.content.length).toBeGreaterThan(0);
  });

  it("fails the curl snippet loudly with the placeholder instead of the key", async () => {
    const placeholder = gettingStartedSnippets({ baseUrl: gateway.url, rawKey: null, model: { id: "demo-chat", maxOutputTokens: null } });
    const code = byId(placeholder, "curl");
    expect(code).toContain(`export ${KEY_ENV}=${KEY_PLACEHOLDER}`);
    const failed = await run("bash", ["-c", code], { timeout: 20_000 }).then(
      () => null,
      (err: { code: number; stdout: string }) => err,
    );
    expect(failed?.code).toBe(22); // curl's exit code for an HTTP error
    expect(JSON.parse(failed!.stdout).error.type).toBe("auth_error");
  });

  it.each([
    ["openai-ts", /\S/],
    ["anthropic-ts", /"type":\s*"text"|type: 'text'/],
    ["vercel-ai", /\S/],
  ] as const)("runs the %s snippet as rendered with tsx", async (id, expected) => {
    const dir = mkdtempSync(join(SCRATCH, `${id}-`));
    scratchDirs.push(dir);
    const file = join(dir, "hello.mts");
    writeFileSync(file, byId(snippets, id));
    const requests = async () => (await gateway.app.ctx.billing.keyUsage(keyId)).totals.requests;
    const before = await requests();
    const { stdout } = await run(TSX, [file], { timeout: 60_000, env: { ...process.env, [KEY_ENV]: raw } });
    expect(stdout).toMatch(expected);
    // The demo model's answer was settled on the key: the request really went through the gateway.
    await expect.poll(requests).toBe(before + 1);
  });

  it("sets Claude Code's variables: base URL without /v1, the key, the model mapping and the output limit", async () => {
    const code = byId(snippets, "claude-code");
    expect(code.endsWith("\nclaude")).toBe(true);
    const { stdout } = await run("bash", ["-c", `${code.slice(0, -"claude".length)}env`], { env: { PATH: process.env.PATH ?? "" } });
    const env = Object.fromEntries(stdout.split("\n").map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
    expect(env).toMatchObject({
      ANTHROPIC_BASE_URL: gateway.url,
      ANTHROPIC_API_KEY: raw,
      ANTHROPIC_MODEL: "demo-chat",
      ANTHROPIC_DEFAULT_OPUS_MODEL: "demo-chat",
      ANTHROPIC_DEFAULT_SONNET_MODEL: "demo-chat",
      ANTHROPIC_DEFAULT_HAIKU_MODEL: "demo-fast",
    });
    // The demo models have no output limit, so Claude Code's own default is left alone.
    expect(["demo-chat", "demo-fast"].map((id) => gateway.app.ctx.config.models.get(id)!.maxOutputTokens)).toEqual([null, null]);
    expect(env.CLAUDE_CODE_MAX_OUTPUT_TOKENS).toBeUndefined();
  });

  it.runIf(HAVE_PYTHON)("writes a Codex config.toml with the /v1 base URL and parseable Python snippets", async () => {
    const { stdout } = await run("python3", ["-c", "import json, sys, tomllib; print(json.dumps(tomllib.loads(sys.argv[1])))", byId(snippets, "codex")]);
    expect(JSON.parse(stdout)).toEqual({
      model: "demo-chat",
      model_provider: "gateway",
      model_providers: { gateway: { name: "Model Gateway", base_url: `${gateway.url}/v1`, wire_api: "responses", env_key: KEY_ENV } },
    });
    for (const id of ["openai-py", "anthropic-py"] as const) {
      await run("python3", ["-c", "import ast, sys; ast.parse(sys.argv[1])", byId(snippets, id)]);
    }
    expect(byId(snippets, "openai-py")).toContain(`base_url="${gateway.url}/v1"`);
    expect(byId(snippets, "anthropic-py")).toContain(`base_url="${gateway.url}"`);
  });
});

describe("snippet text", () => {
  it("prefers server.public_url to the browser's origin and drops trailing slashes", () => {
    expect(gatewayBaseUrl(null, "http://127.0.0.1:8080")).toBe("http://127.0.0.1:8080");
    expect(gatewayBaseUrl("https://llm.example.com/gw/", "http://127.0.0.1:8080")).toBe("https://llm.example.com/gw");
  });

  it("quotes what a shell would split or expand", () => {
    expect(shellWord("https://llm.example.com/v1/chat/completions")).toBe("https://llm.example.com/v1/chat/completions");
    expect(shellWord(`it's $HOME`)).toBe(`'it'\\''s $HOME'`);
  });

  it("gives each client its base-URL form", () => {
    const snippets = gettingStartedSnippets({ baseUrl: "https://llm.example.com", rawKey: null, model: { id: "m", maxOutputTokens: null } });
    expect(snippets.map((s) => s.id)).toEqual(["curl", "openai-ts", "openai-py", "anthropic-ts", "anthropic-py", "vercel-ai", "claude-code", "codex"]);
    expect(byId(snippets, "openai-ts")).toContain(`baseURL: "https://llm.example.com/v1"`);
    expect(byId(snippets, "vercel-ai")).toContain(`baseURL: "https://llm.example.com/v1"`);
    expect(byId(snippets, "anthropic-ts")).toContain(`baseURL: "https://llm.example.com",`);
    expect(byId(snippets, "claude-code")).toContain("export ANTHROPIC_BASE_URL=https://llm.example.com\n");
    expect(byId(snippets, "codex")).toContain(`base_url = "https://llm.example.com/v1"`);
    // Without a known output limit, Claude Code's variable is left out and the note says what to set.
    expect(byId(snippets, "claude-code")).not.toContain("CLAUDE_CODE_MAX_OUTPUT_TOKENS=");
    expect(snippets.find((s) => s.id === "claude-code")!.note).toContain("CLAUDE_CODE_MAX_OUTPUT_TOKENS");
    // With limits, Claude Code's one output limit fits the smaller of the two models, and at most its 32,000.
    const limited = (model: number | null, small: number | null) =>
      byId(
        gettingStartedSnippets({ baseUrl: "http://h", rawKey: null, model: { id: "a", maxOutputTokens: model }, smallModel: { id: "b", maxOutputTokens: small } }),
        "claude-code",
      );
    expect(limited(8192, 4096)).toContain("export CLAUDE_CODE_MAX_OUTPUT_TOKENS=4096\n");
    expect(limited(64000, null)).toContain("export CLAUDE_CODE_MAX_OUTPUT_TOKENS=32000\n");
    // The placeholder, never a key, when the raw key is not at hand.
    expect(snippets.filter((s) => s.language === "sh").every((s) => s.code.startsWith(`export ${KEY_ENV}=${KEY_PLACEHOLDER}\n`))).toBe(true);
  });
});
