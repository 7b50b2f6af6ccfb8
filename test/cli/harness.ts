// Runs the in-process CLI against one test database with a small temp config, capturing output.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../../src/cli/main.js";
import type { CliIo } from "../../src/cli/io.js";
import { createTestDatabase, type TestDatabase } from "../support/databases.js";

export const TEST_CONFIG = `
server:
  default_tier: standard
providers:
  mock:
    type: openai
    base_url: http://127.0.0.1:9/v1
    keys: ["\${MOCK_SHARED_KEY}"]
models:
  - id: mock-chat
    kind: chat
    provider: mock
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
tiers:
  standard: { models: ["*"] }
  basic: { models: [mock-chat] }
`;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stderr split into non-empty lines. */
  errLines: string[];
}

export interface CliHarness {
  database: TestDatabase;
  cwd: string;
  env: Record<string, string>;
  run(argv: string[], options?: { stdin?: string; env?: Record<string, string> }): Promise<CliResult>;
  /** Runs with --json, expects exit 0 and returns the parsed stdout. */
  json<T = Record<string, unknown>>(argv: string[], options?: { stdin?: string }): Promise<T>;
  close(): Promise<void>;
}

export async function createHarness(kind: "sqlite" | "postgres", configText = TEST_CONFIG): Promise<CliHarness> {
  const database = await createTestDatabase(kind);
  const cwd = mkdtempSync(join(tmpdir(), "gw-cli-"));
  const configPath = join(cwd, "test.config.yaml");
  writeFileSync(configPath, configText);
  const env: Record<string, string> = { ...database.env, GATEWAY_CONFIG: configPath, MOCK_SHARED_KEY: "sk-shared-0000" };

  const run = async (argv: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<CliResult> => {
    let stdout = "";
    let stderr = "";
    const io: CliIo = {
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
      env: { ...env, ...options.env },
      cwd,
      ...(options.stdin !== undefined && { readStdin: async () => options.stdin ?? "" }),
    };
    const code = await runCli(argv, io);
    return { code, stdout, stderr, errLines: stderr.split("\n").filter((line) => line.trim() !== "") };
  };

  const json = async <T>(argv: string[], options: { stdin?: string } = {}): Promise<T> => {
    const result = await run([...argv, "--json"], options);
    if (result.code !== 0) throw new Error(`gateway ${argv.join(" ")} exited ${result.code}: ${result.stderr}`);
    return JSON.parse(result.stdout) as T;
  };

  return {
    database,
    cwd,
    env,
    run,
    json,
    close: async () => {
      rmSync(cwd, { recursive: true, force: true });
      await database.drop();
    },
  };
}

/** A decimal USD string as the CLI prints money: at least two decimals, never a float. */
export const USD_PATTERN = /^\d+\.\d{2,9}$/;
