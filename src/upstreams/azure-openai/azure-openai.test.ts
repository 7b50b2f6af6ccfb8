// Azure OpenAI addressing and authentication: the OpenAI plans re-addressed to a deployment (or to
// the v1 API), with the api-version query and the api-key header; the body is OpenAI's unchanged.
import { describe, expect, it } from "vitest";
import type { ModelConfig, ProviderConfig } from "../../core/catalog.js";
import type { UpstreamRequest } from "../upstream-client.js";
import { toGolden } from "../../wire/shared/read-fixture.test-kit.js";
import { signedRequest } from "../request.js";
import { upstreams } from "../registry.js";
import { azureOpenAiUpstream } from "./index.js";
import { azurePath, DEFAULT_AZURE_API_VERSION } from "./paths.js";

function provider(baseUrl: string, apiVersion?: string): ProviderConfig {
  return {
    name: "az",
    type: "azure-openai",
    baseUrl,
    sharedKeys: [],
    apis: new Set(["chat", "responses"]),
    headers: {},
    timeoutMs: 1000,
    connectTimeoutMs: 1000,
    maxConnections: 16,
    connectionWaitMs: 1000,
    http2: false,
    ...(apiVersion === undefined ? {} : { apiVersion }),
  };
}

function model(p: ProviderConfig, upstreamModel = "gpt-4o-prod"): ModelConfig {
  const pricing = {
    inputPerMtok: 0n,
    cachedInputPerMtok: 0n,
    cacheWrite5mPerMtok: 0n,
    cacheWrite1hPerMtok: 0n,
    webSearchPerCall: 0n,
    perRequest: 0n,
    outputPerMtok: 0n,
    perImage: new Map(),
    perVideoSecond: 0n,
  };
  return {
    id: "gpt-4o",
    kind: "chat",
    provider: p,
    upstreamModel,
    contextWindow: null,
    maxOutputTokens: null,
    defaultOutputTokens: 100,
    modalities: { input: ["text", "image"], output: ["text"] },
    pricing,
    tiers: [],
  };
}

const RESOURCE = "https://contoso.openai.azure.com";
const CHAT_REQUEST = {
  model: "gpt-4o",
  stream: true,
  messages: [
    { role: "system", content: "Be brief." },
    {
      role: "user",
      content: [
        { type: "text", text: "What is in this picture, and the weather there?" },
        { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
      ],
    },
  ],
  tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }],
};

describe("azure-openai upstream", () => {
  it("is registered under its config name", () => {
    expect(upstreams["azure-openai"]).toBe(azureOpenAiUpstream);
  });

  it("addresses the deployment with the default api-version on the resource endpoint", () => {
    const m = model(provider(RESOURCE));
    expect(azurePath(m, "chat/completions")).toBe(`/openai/deployments/gpt-4o-prod/chat/completions?api-version=${DEFAULT_AZURE_API_VERSION}`);
    expect(azurePath(m, "images/generations")).toBe(`/openai/deployments/gpt-4o-prod/images/generations?api-version=${DEFAULT_AZURE_API_VERSION}`);
    expect(azureOpenAiUpstream.media.embeddings!.path(m)).toBe(`/openai/deployments/gpt-4o-prod/embeddings?api-version=${DEFAULT_AZURE_API_VERSION}`);
    // Responses is per resource: the deployment goes in the body's model.
    expect(azurePath(m, "responses")).toBe(`/openai/responses?api-version=${DEFAULT_AZURE_API_VERSION}`);
  });

  it("uses the provider's api_version and escapes the deployment name", () => {
    const m = model(provider(RESOURCE, "2024-10-21"), "my deployment/1");
    expect(azurePath(m, "chat/completions")).toBe("/openai/deployments/my%20deployment%2F1/chat/completions?api-version=2024-10-21");
  });

  it("uses OpenAI's paths and no api-version on the v1 API unless one is set", () => {
    expect(azurePath(model(provider(`${RESOURCE}/openai/v1`)), "chat/completions")).toBe("/chat/completions");
    expect(azurePath(model(provider(`${RESOURCE}/openai/v1`)), "responses")).toBe("/responses");
    expect(azureOpenAiUpstream.media.embeddings!.path(model(provider(`${RESOURCE}/openai/v1`)))).toBe("/embeddings");
    expect(azurePath(model(provider(`${RESOURCE}/openai/v1`, "preview")), "images/generations")).toBe("/images/generations?api-version=preview");
  });

  it("authenticates with the api-key header, never a Bearer token", async () => {
    const p = provider(RESOURCE);
    const request = await signedRequest(azureOpenAiUpstream.authenticate, p, "POST", "/openai/deployments/d/chat/completions?api-version=x", "azure-key-1", "{}");
    expect(request.headers["api-key"]).toBe("azure-key-1");
    expect(request.headers.authorization).toBeUndefined();
    expect(request.url).toBe(`${RESOURCE}/openai/deployments/d/chat/completions?api-version=x`);
  });

  it.each([
    ["deployments", RESOURCE],
    ["v1", `${RESOURCE}/openai/v1`],
  ])("translates a Chat request with tools and an image for the %s form (golden)", async (form, baseUrl) => {
    const m = model(provider(baseUrl));
    const plan = azureOpenAiUpstream.chatPlan!(structuredClone(CHAT_REQUEST), m);
    const request: UpstreamRequest = await signedRequest(azureOpenAiUpstream.authenticate, m.provider, "POST", plan.path, "KEY", JSON.stringify(plan.body));
    const wire = { url: request.url, headers: request.headers, body: JSON.parse(String(request.body)) as unknown };
    await expect(toGolden(wire)).toMatchFileSnapshot(`./__fixtures__/chat-request.${form}.golden.json`);
  });

  it("passes an Azure chat completion through, content-filter fields and cached-token usage included (golden)", async () => {
    const m = model(provider(RESOURCE));
    const plan = azureOpenAiUpstream.nativePlans.chat!({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }, m);
    const completion = {
      choices: [
        {
          content_filter_results: { hate: { filtered: false, severity: "safe" }, violence: { filtered: false, severity: "safe" } },
          finish_reason: "stop",
          index: 0,
          logprobs: null,
          message: { content: "Hello.", refusal: null, role: "assistant" },
        },
      ],
      created: 1760000000,
      id: "chatcmpl-AZure2",
      model: "gpt-4o-2024-11-20",
      object: "chat.completion",
      prompt_filter_results: [{ prompt_index: 0, content_filter_results: { jailbreak: { filtered: false, detected: false } } }],
      system_fingerprint: "fp_az1",
      usage: { completion_tokens: 2, prompt_tokens: 30, prompt_tokens_details: { cached_tokens: 16 }, total_tokens: 32 },
    };
    const answer = plan.fromUpstream(completion);
    expect(answer.usage).toEqual({
      inputTokens: 30,
      cachedInputTokens: 16,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 0,
      outputTokens: 2,
      reasoningTokens: 0,
      webSearchCalls: 0,
      estimated: false,
    });
    await expect(toGolden(answer.body)).toMatchFileSnapshot("./__fixtures__/chat-completion.client.golden.json");
  });

  it("reads OpenAI Chat usage, cached tokens included", () => {
    expect(azureOpenAiUpstream.readUsage({ prompt_tokens: 10, completion_tokens: 3, prompt_tokens_details: { cached_tokens: 4 } })).toMatchObject({
      inputTokens: 10,
      cachedInputTokens: 4,
      outputTokens: 3,
    });
  });
});
