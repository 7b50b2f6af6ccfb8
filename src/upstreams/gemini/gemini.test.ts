// The gemini descriptor's own parts: the key header, the usage it reads, the paths its plan builds.
import { describe, expect, it } from "vitest";
import type { ModelConfig, ProviderConfig } from "../../core/catalog.js";
import { GatewayError } from "../../errors/catalogue.js";
import type { EmbeddingRequest } from "../embedding-request.js";
import type { UpstreamRequest } from "../upstream-client.js";
import { geminiUpstream } from "./index.js";

/** An embeddings request as the route's parser leaves it. */
function embeddingRequest(fields: Partial<EmbeddingRequest> & Pick<EmbeddingRequest, "input">): EmbeddingRequest {
  return { model: "e", inputCount: 1, projectedTokens: 1, dimensions: null, encodingFormat: "float", user: null, inputHints: null, ...fields };
}

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
      // Gemini's cached content is a cache read; Gemini reports no cache writes and no web search count.
      cachedInputTokens: 1000,
      cacheWrite5mTokens: 0,
      cacheWrite1hTokens: 0,
      outputTokens: 340,
      reasoningTokens: 300,
      webSearchCalls: 0,
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

  it("asks batchEmbedContents for one request per text, dimensions as outputDimensionality", () => {
    const embeddings = geminiUpstream.media.embeddings!;
    const model = { id: "e", upstreamModel: "models/gemini-embedding-001" } as ModelConfig;
    expect(embeddings.path(model)).toBe("/v1beta/models/gemini-embedding-001:batchEmbedContents");
    expect(embeddings.requestBody(embeddingRequest({ input: ["a", "b"], inputCount: 2, dimensions: 768, user: "u" }), model)).toEqual({
      requests: [
        { model: "models/gemini-embedding-001", content: { parts: [{ text: "a" }] }, outputDimensionality: 768 },
        { model: "models/gemini-embedding-001", content: { parts: [{ text: "b" }] }, outputDimensionality: 768 },
      ],
    });
    expect(embeddings.requestBody(embeddingRequest({ input: "a" }), model)).toEqual({
      requests: [{ model: "models/gemini-embedding-001", content: { parts: [{ text: "a" }] } }],
    });
  });

  it.each([
    [[1, 2, 3], "token ids"],
    [[[1], [2]], "token ids"],
    [Array.from({ length: 101 }, () => "x"), "at most 100"],
  ])("refuses an embeddings input Gemini cannot take, naming input (%#)", (input, message) => {
    const model = { id: "e", upstreamModel: "gemini-embedding-001" } as ModelConfig;
    let refusal: unknown;
    try {
      geminiUpstream.media.embeddings!.requestBody(embeddingRequest({ input, inputCount: Array.isArray(input[0]) || typeof input[0] === "string" ? input.length : 1 }), model);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(GatewayError);
    expect(refusal).toMatchObject({ type: "invalid_request", details: { param: "input" } });
    expect((refusal as GatewayError).message).toContain(message);
  });

  it("reads a batch's vectors, and usageMetadata's prompt tokens only when present", () => {
    const readAnswer = geminiUpstream.media.embeddings!.readAnswer!;
    expect(readAnswer({ embeddings: [{ values: [0.5, -1] }, { values: [2] }] })).toEqual({ vectors: [[0.5, -1], [2]], promptTokens: null });
    expect(readAnswer({ embeddings: [{ values: [1] }], usageMetadata: { promptTokenCount: 7 } })).toEqual({ vectors: [[1]], promptTokens: 7 });
    expect(() => readAnswer({ embedding: { values: [1] } })).toThrow(/not a batch of embeddings/);
    expect(() => readAnswer({ embeddings: [{ values: ["1"] }] })).toThrow(/without values/);
  });
});
