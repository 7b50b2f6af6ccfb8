// The first-start message: the administrator's login and first API key, shown once, and, when the
// catalog has demo models, commands that work as printed: a curl that gets an answer, Claude Code
// and Codex one-liners against the demo models (test/cli/first-start.test.ts runs them).
import type { BootstrapResult } from "../accounts/bootstrap.js";
import { formatUsd } from "../core/money.js";

/** A word for a POSIX shell: single-quoted unless it is plainly safe. */
function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:=@-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

export function firstStartMessage(address: string, first: BootstrapResult): string {
  const lines = [
    "",
    "First start: created an administrator account. This is shown once.",
    `  dashboard:  ${address}/dashboard  (email ${first.email}, password ${first.password})`,
    `  API key:    ${first.apiKey}`,
  ];
  const chat = first.demoModels[0];
  if (chat === undefined || first.demoCredit === null) {
    lines.push(`  try:        curl -s ${address}/v1/models -H "Authorization: Bearer ${first.apiKey}"`, "");
    return lines.join("\n");
  }
  const fast = first.demoModels[1] ?? chat;
  const body = JSON.stringify({ model: chat, messages: [{ role: "user", content: "Hello, gateway!" }] });
  const codexProvider = `model_providers.gateway={name="Model Gateway",base_url="${address}/v1",wire_api="responses",env_key="GATEWAY_API_KEY"}`;
  lines.push(
    `  demo:       ${first.demoModels.join(", ")} answer in-process (made-up text, no provider key); the account has ${formatUsd(first.demoCredit)} USD of demo credit`,
    `  try:        curl -s ${address}/v1/chat/completions -H "Authorization: Bearer ${first.apiKey}" -H "Content-Type: application/json" -d ${shellWord(body)}`,
    `  Claude Code: ANTHROPIC_BASE_URL=${address} ANTHROPIC_API_KEY=${first.apiKey} ANTHROPIC_MODEL=${chat} ANTHROPIC_DEFAULT_HAIKU_MODEL=${fast} claude -p "Say hello"`,
    `  Codex:      GATEWAY_API_KEY=${first.apiKey} codex exec -c model_provider=gateway -c ${shellWord(codexProvider)} -m ${chat} --skip-git-repo-check "Say hello"`,
    `  then:       sign in to the dashboard to see the request, its cost and the usage chart`,
    "",
  );
  return lines.join("\n");
}
