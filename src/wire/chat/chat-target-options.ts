// How a translated Chat request should be shaped for a given upstream. The provider adapter knows
// which upstream it calls; the format translators only follow these switches.

export interface ChatTargetOptions {
  /** Field for the output token limit. `max_tokens` is the widely accepted one; OpenAI o-series need `max_completion_tokens`. */
  tokenLimitField?: "max_tokens" | "max_completion_tokens";
  /** Role for system prompts; some OpenAI reasoning models prefer `developer`. */
  systemRole?: "system" | "developer";
}

export function setTokenLimit(target: { max_tokens?: number | null; max_completion_tokens?: number | null }, value: number, options: ChatTargetOptions): void {
  if (options.tokenLimitField === "max_completion_tokens") target.max_completion_tokens = value;
  else target.max_tokens = value;
}
