// Test-only: loads a JSON fixture relative to the calling test file.
import { readFileSync } from "node:fs";

export function readFixture<T>(baseUrl: string, relativePath: string): T {
  return JSON.parse(readFileSync(new URL(relativePath, baseUrl), "utf8")) as T;
}

/** Golden file content: stable, reviewable JSON. */
export function toGolden(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** The Chat stream fixtures (src/wire/chat/__fixtures__) every stream translator is checked against. */
export const CHAT_STREAM_FIXTURES = [
  "stream-text",
  "stream-tool-call",
  "stream-multi-tool",
  "stream-max-tokens",
  "azure-stream-tool-call",
  "azure-stream-content-filter",
  "stream-reasoning-tool-call",
] as const;
