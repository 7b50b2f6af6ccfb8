// What a CLI command may touch: its arguments, output streams and environment. Tests pass their own.
import { parseArgs, type ParseArgsConfig } from "node:util";
import { formatUsd, type Nano } from "../core/money.js";

export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  readStdin?: () => Promise<string>;
}

/** A bad invocation: printed as one line, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export type Options = NonNullable<ParseArgsConfig["options"]>;

export function parseCommand(args: string[], options: Options, positionals: string[]) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, json: { type: "boolean" } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(describeParseError(error));
  }
  if (parsed.positionals.length !== positionals.length) {
    throw new UsageError(
      `expected ${positionals.length ? positionals.join(" ") : "no positional arguments"}, got ${parsed.positionals.length ? parsed.positionals.join(" ") : "none"}`,
    );
  }
  return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals, json: parsed.values.json === true };
}

// node:util's messages run over several lines and suggest "--" tricks; keep one short line.
function describeParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  const option = /'(-[^' ]*)/.exec(message)?.[1];
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option) return `unknown option ${option}`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option && /ambiguous/.test(message)) {
    return `${option} needs a value; write a value starting with "-" as ${option}=-…`;
  }
  const first = message.split("\n")[0]!.replace(/^TypeError \[\w+\]: /, "");
  return first.charAt(0).toLowerCase() + first.slice(1);
}

export function requireOption(values: Record<string, string | boolean | undefined>, name: string): string {
  const value = values[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

/** Prints a result as JSON (--json) or as aligned text lines. */
export function emit(io: CliIo, json: boolean, value: unknown, text: () => string): void {
  io.stdout(json ? `${JSON.stringify(value, jsonReplacer, 2)}\n` : `${text()}\n`);
}

function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

export function table(rows: Array<Record<string, string | number | null>>): string {
  if (rows.length === 0) return "(none)";
  const columns = Object.keys(rows[0]!);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? "-").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => String(r[c] ?? "-"))))].join("\n");
}

export function usd(nano: Nano | null): string | null {
  return nano === null ? null : formatUsd(nano);
}
