// The gemini descriptor's own parts: the key header, the usage it reads, the paths its plan builds.
import { describe, expect, it } from "vitest";
import type { ModelConfig, ProviderConfig } from "../../config/catalog.js";
import type { UpstreamRequest } from "../../providers/upstream-client.js";
import { geminiUpstream } from "./index.js";

describe("gemini upstream", () => {
  it("sends the key in x-goog-api-key and nothing in Authorization", () => {
    const request: UpstreamRequest = { url: "http://127.0.0.1/v1beta/models/m:generateContent", method: "POST", headers: {} };
    // The provider matters only to signing types; gemini's header needs none of it.
    void geminiUpstream.authenticate(request, "AIza-key", {}, {} as ProviderConfig);
    expect(request.headers).toEqual({ "x-goog-api-key": "AIza-key" });
  });

  it("reads usageMetadata: cached content inside the prompt, thoughts inside the output", () => {
    expect(geminiUpstream.readUsage({ promptTokenCount: 1200, cachedContentTokenCount: 1000, candidatesTokenCount: 40, thoughtsTokenCount: 300, totalTokenCount: 1540 })).toEqual({
      inputTokens: 1200,
      cachedInputTokens: 1000,
      outputTokens: 340,
      reasoningTokens: 300,
      estimated: false,
    });
    expect(geminiUpstream.readUsage(undefined)).toBeNull();
  });

  it("addresses generateContent, and streamGenerateContent with alt=sse", () => {
    const model = { id: "g", upstreamModel: "gemini-2.5-flash", defaultOutputTokens: 100 } as ModelConfig;
    const messages = [{ role: "user", content: "x" }];
    expect(geminiUpstream.chatPlan!({ model: "g", messages }, model).path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(geminiUpstream.chatPlan!({ model: "g", messages, stream: true }, model).path).toBe("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse");
    expect(geminiUpstream.chatPlan!({ model: "g", messages }, { ...model, upstreamModel: "models/gemini-pro" }).path).toBe("/v1beta/models/gemini-pro:generateContent");
  });
});
