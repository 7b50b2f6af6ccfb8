// Shared by the orchestrator and its child processes.
export const BENCH_MODEL = "gpt-bench";
/** The body every load generator sends (max_tokens keeps the hold small). */
export function requestBody(stream: boolean, model = BENCH_MODEL): string {
  return JSON.stringify({
    model,
    messages: [{ role: "user", content: "Say hello in one short sentence." }],
    max_tokens: 64,
    ...(stream ? { stream: true } : {}),
  });
}
