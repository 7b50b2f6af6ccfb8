// What one upstream call consumed, in the units prices are quoted in.

export interface Usage {
  /** Prompt tokens including the cached ones. */
  inputTokens: number;
  /** The part of inputTokens served from the provider's prompt cache. */
  cachedInputTokens: number;
  /** Completion tokens including reasoning tokens. */
  outputTokens: number;
  /** The part of outputTokens spent on reasoning. */
  reasoningTokens: number;
  images?: number;
  videoSeconds?: number;
  /** True when the upstream reported no usage and the gateway estimated it. */
  estimated: boolean;
}

export const ZERO_USAGE: Usage = { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0, reasoningTokens: 0, estimated: false };

export function totalTokens(usage: Usage): number {
  return usage.inputTokens + usage.outputTokens;
}
