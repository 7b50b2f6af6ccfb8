// Models for the clamping tests (test/gateway/clamping*.test.ts): $3 input and $15 output per million
// tokens, output limits large enough for max_tokens 32,000, on the OpenAI-compatible and the
// Anthropic-native mock of mockConfig(), and a routing group whose deployments differ in price.
export const MIN_OUTPUT_TOKENS = 100;

export const BIG_MODELS = `
  - id: big-gpt
    kind: chat
    provider: mockai
    upstream_model: upstream-big
    max_output_tokens: 64000
    default_output_tokens: 32000
    pricing: { input_per_mtok: "3.00", output_per_mtok: "15.00" }
  - id: big-claude
    kind: chat
    provider: mockanthropic
    upstream_model: claude-big
    max_output_tokens: 64000
    default_output_tokens: 32000
    pricing: { input_per_mtok: "3.00", output_per_mtok: "15.00" }
  - id: big-routed
    kind: chat
    max_output_tokens: 64000
    default_output_tokens: 32000
    pricing: { input_per_mtok: "3.00", output_per_mtok: "15.00" }
    deployments:
      - { name: cheap, provider: mockai, upstream_model: up-cheap }
      - { name: dear, provider: mockai, upstream_model: up-dear, pricing: { input_per_mtok: "3.00", output_per_mtok: "30.00" } }
billing:
  clamp:
    min_output_tokens: ${MIN_OUTPUT_TOKENS}
`;
