// Where an Azure OpenAI request goes. The body is OpenAI's; only the address differs, in one of two
// forms chosen by the provider's base_url:
//   - the resource endpoint (https://RES.openai.azure.com): the deployment in the path and a dated
//     api-version query parameter, /openai/deployments/{deployment}/chat/completions?api-version=…
//     (Responses is not per deployment: /openai/responses?api-version=…, the deployment in the body);
//   - the v1 API (base_url ending in /openai/v1): OpenAI's paths, the deployment as the body's model,
//     and no api-version unless the provider sets one (for example `preview`).
// The deployment is the model's upstream_model either way (the OpenAI plans put it in the body).
import type { ModelConfig, ProviderConfig } from "../../core/catalog.js";

/**
 * The api-version of the deployments form when the provider sets none: the newest dated version
 * that carries everything this type serves (Chat with stream_options usage, Responses, gpt-image-1
 * images, embeddings). Dated versions are retired; the v1 form needs none.
 */
export const DEFAULT_AZURE_API_VERSION = "2025-04-01-preview";

/** The operations the gateway sends to Azure. */
export type AzureOperation = "chat/completions" | "embeddings" | "images/generations" | "responses";

/** Operations addressed under the resource, not under a deployment (the deployment is in the body). */
const RESOURCE_SCOPED: ReadonlySet<AzureOperation> = new Set(["responses"]);

const V1_BASE_URL = /\/openai\/v1$/;

/** The provider's base_url is Azure's v1 API (…/openai/v1), not the resource endpoint. */
export function isAzureV1(provider: ProviderConfig): boolean {
  return V1_BASE_URL.test(provider.baseUrl);
}

/** The path (with query) under the provider's base URL for one operation on the model's deployment. */
export function azurePath(model: ModelConfig, operation: AzureOperation): string {
  const provider = model.provider;
  if (isAzureV1(provider)) return provider.apiVersion === undefined ? `/${operation}` : `/${operation}?api-version=${encodeURIComponent(provider.apiVersion)}`;
  const scope = RESOURCE_SCOPED.has(operation) ? "/openai" : `/openai/deployments/${encodeURIComponent(model.upstreamModel)}`;
  return `${scope}/${operation}?api-version=${encodeURIComponent(provider.apiVersion ?? DEFAULT_AZURE_API_VERSION)}`;
}
