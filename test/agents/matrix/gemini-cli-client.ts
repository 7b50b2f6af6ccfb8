// The compatibility matrix's Gemini CLI column: `gemini -p` headless (pinned @google/gemini-cli) with
// GOOGLE_GEMINI_BASE_URL at the gateway's /v1beta and the gateway key as GEMINI_API_KEY, telemetry,
// usage statistics and update checks off, every other request sent to the proxy trap.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { geminiCliEnv, geminiCliLauncher, runAgent, tempDir, type AgentRun } from "../support.js";
import {
  abortCli,
  ANSWER,
  CACHED_TOKENS,
  check,
  checkImageReached,
  checkToolLoop,
  jsonLines,
  PNG,
  RUN_TIMEOUT_MS,
  runSummary,
  scriptFor,
  TOOL_SECRET,
  type CellContext,
  type Client,
} from "./agents.js";

async function gemini(ctx: CellContext, prompt: string, options: { format: "json" | "stream-json"; cwd?: string; signal?: AbortSignal }): Promise<AgentRun> {
  const launcher = geminiCliLauncher();
  check(launcher, "@google/gemini-cli is missing: run npm install");
  const env = geminiCliEnv(ctx.gatewayUrl, ctx.key, ctx.proxy);
  const args = [launcher, "-p", prompt, "-m", ctx.model, "--output-format", options.format];
  return runAgent(process.execPath, args, { env, cwd: options.cwd ?? tempDir("matrix-gemini-cwd-"), timeoutMs: RUN_TIMEOUT_MS, ...(options.signal && { signal: options.signal }) });
}

/** The --output-format json result: the final text and the per-model token stats. */
function result(run: AgentRun): { response: string; stats?: { models?: Record<string, { tokens?: { cached?: number } }> } } {
  check(run.code === 0, `Gemini CLI did not finish: ${runSummary(run)}`);
  try {
    return JSON.parse(run.stdout.slice(run.stdout.indexOf("{"))) as { response: string };
  } catch {
    throw new Error(`stdout is not Gemini CLI's JSON result: ${runSummary(run)}`);
  }
}

export const geminiCliClient: Client = {
  id: "gemini-cli",
  name: "Gemini CLI",
  packages: ["@google/gemini-cli"],
  async run(feature, ctx) {
    const cwd = tempDir("matrix-gemini-cwd-");
    writeFileSync(join(cwd, "note.txt"), `the secret is ${TOOL_SECRET}\n`);
    writeFileSync(join(cwd, "pixel.png"), PNG);
    scriptFor(feature, ctx, { name: "read_file", args: { file_path: "note.txt" } });
    switch (feature) {
      case "plain": {
        const out = result(await gemini(ctx, "Say the magic word.", { format: "json" }));
        check(out.response.trim() === ANSWER, `answer ${JSON.stringify(out.response)}`);
        return;
      }
      case "streaming": {
        const run = await gemini(ctx, "Say the magic word.", { format: "stream-json" });
        check(run.code === 0, `Gemini CLI did not finish: ${runSummary(run)}`);
        const deltas = jsonLines(run.stdout).filter((l) => l.type === "message" && l.role === "assistant" && l.delta === true);
        check(deltas.length >= 2, `${deltas.length} assistant deltas reached Gemini CLI, expected the answer in pieces`);
        const text = deltas.map((l) => String(l.content)).join("");
        check(text.trim() === ANSWER, `answer ${JSON.stringify(text)}`);
        return;
      }
      case "tools": {
        const out = result(await gemini(ctx, "What does note.txt say?", { format: "json", cwd }));
        return checkToolLoop(ctx, out.response);
      }
      case "images": {
        // The CLI's @path reads the file into the prompt as an inline image part.
        const out = result(await gemini(ctx, "Say the magic word about @pixel.png", { format: "json", cwd }));
        checkImageReached(ctx);
        check(out.response.trim() === ANSWER, `answer ${JSON.stringify(out.response)}`);
        return;
      }
      case "reasoning":
        // Listed as not applicable in the matrix: the headless CLI prints no thoughts.
        return;
      case "caching": {
        const out = result(await gemini(ctx, "Say the magic word.", { format: "json" }));
        const cached = Object.values(out.stats?.models ?? {}).reduce((sum, model) => sum + (model.tokens?.cached ?? 0), 0);
        check(cached === CACHED_TOKENS, `Gemini CLI's stats report ${cached} cached tokens, the upstream reported ${CACHED_TOKENS}`);
        return;
      }
      case "abort":
        return abortCli(ctx, (signal) => gemini(ctx, "Say the magic word.", { format: "json", signal }));
    }
  },
};
