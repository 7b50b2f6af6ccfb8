// The OpenTelemetry GenAI semantic conventions' names for the gateway's routes and upstream types,
// shared by metrics and traces (and free of both libraries).
/** The GenAI semantic conventions' gen_ai.provider.name for each upstream type. */
const GEN_AI_PROVIDER: Record<string, string> = {
  openai: "openai",
  anthropic: "anthropic",
  "azure-openai": "azure.ai.openai",
  bedrock: "aws.bedrock",
  gemini: "gcp.gemini",
  "google-operations": "gcp.vertex_ai",
};

/** gen_ai.operation.name of a route (the conventions' names where one exists). */
export function genAiOperation(route: string): string {
  if (route.startsWith("/v1/embeddings")) return "embeddings";
  if (route.startsWith("/v1/images")) return "generate_content";
  if (route.startsWith("/v1/videos")) return "generate_content";
  return "chat";
}

export function genAiProvider(type: string | undefined): string {
  return type === undefined ? "" : (GEN_AI_PROVIDER[type] ?? type);
}
