// The compatibility matrix's Gemini API client: Google's official @google/genai SDK against the
// gateway's /v1beta routes (the key in x-goog-api-key), each feature checked as for the other clients.
import { GoogleGenAI, Type, type Content, type GenerateContentResponse } from "@google/genai";
import { ANSWER, CACHED_TOKENS, check, checkImageReached, checkToolLoop, checkUpstreamAborted, PNG, scriptFor, type CellContext, type Client } from "./agents.js";

const lookupDeclaration = {
  name: "lookup",
  description: "Looks a key up.",
  parameters: { type: Type.OBJECT, properties: { key: { type: Type.STRING } }, required: ["key"] },
};

/** Runs the tool loop as an application does: call, answer each functionCall, until the model answers in text. */
async function toolLoop(ai: GoogleGenAI, model: string): Promise<string> {
  const contents: Content[] = [{ role: "user", parts: [{ text: "Look the door up." }] }];
  for (let step = 0; step < 4; step++) {
    const response: GenerateContentResponse = await ai.models.generateContent({ model, contents, config: { tools: [{ functionDeclarations: [lookupDeclaration] }] } });
    const calls = response.functionCalls ?? [];
    if (calls.length === 0) return response.text ?? "";
    contents.push(response.candidates![0]!.content!);
    contents.push({
      role: "user",
      parts: calls.map((call) => ({ functionResponse: { id: call.id, name: call.name, response: { output: `the ${String(call.args?.key)} secret is MATRIX-5150` } } })),
    });
  }
  return "";
}

export const genaiClient: Client = {
  id: "google-genai",
  name: "Google Gen AI SDK (Gemini API)",
  packages: ["@google/genai"],
  async run(feature, ctx: CellContext) {
    const ai = new GoogleGenAI({ apiKey: ctx.key, httpOptions: { baseUrl: ctx.gatewayUrl } });
    scriptFor(feature, ctx, { name: "lookup", args: { key: "door" } });
    const model = ctx.model;
    switch (feature) {
      case "plain": {
        const response = await ai.models.generateContent({ model, contents: "Say the magic word." });
        check(response.text === ANSWER, `answer ${JSON.stringify(response.text)}`);
        return;
      }
      case "streaming": {
        const chunks: string[] = [];
        for await (const chunk of await ai.models.generateContentStream({ model, contents: "Say the magic word." })) if (chunk.text) chunks.push(chunk.text);
        check(chunks.length >= 2, `${chunks.length} text chunks, expected the answer in pieces`);
        check(chunks.join("") === ANSWER, `answer ${JSON.stringify(chunks.join(""))}`);
        return;
      }
      case "tools":
        return checkToolLoop(ctx, await toolLoop(ai, model));
      case "images": {
        const response = await ai.models.generateContent({
          model,
          contents: [{ role: "user", parts: [{ text: "Say the magic word about this image." }, { inlineData: { mimeType: "image/png", data: PNG.toString("base64") } }] }],
        });
        checkImageReached(ctx);
        check(response.text === ANSWER, `answer ${JSON.stringify(response.text)}`);
        return;
      }
      case "reasoning": {
        const response = await ai.models.generateContent({
          model,
          contents: "Think, then say the magic word.",
          config: { thinkingConfig: { thinkingBudget: 1024, includeThoughts: true } },
        });
        const thoughts = (response.candidates?.[0]?.content?.parts ?? []).filter((part) => part.thought === true).map((part) => part.text ?? "");
        check(thoughts.join("").includes("REASON-77"), `thought parts ${JSON.stringify(thoughts)}`);
        check(response.text === ANSWER, `answer ${JSON.stringify(response.text)}`);
        return;
      }
      case "caching": {
        const response = await ai.models.generateContent({ model, contents: "Say the magic word." });
        const cached = response.usageMetadata?.cachedContentTokenCount;
        check(cached === CACHED_TOKENS, `usageMetadata reports ${cached} cached tokens, the upstream reported ${CACHED_TOKENS}`);
        return;
      }
      case "abort": {
        const controller = new AbortController();
        let chunks = 0;
        try {
          const stream = await ai.models.generateContentStream({ model, contents: "Say the magic word.", config: { abortSignal: controller.signal } });
          for await (const chunk of stream) {
            if (!chunk.text) continue;
            chunks += 1;
            if (chunks === 2) controller.abort();
          }
        } catch {
          // The abort ends the stream with an AbortError.
        }
        check(chunks >= 2, `the slow stream delivered ${chunks} chunks before the abort, expected it to be streaming`);
        return checkUpstreamAborted(ctx);
      }
    }
  },
};
