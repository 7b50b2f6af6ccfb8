// Config load checks models and providers against what their upstream type can serve
// (src/upstreams/*: capabilities), so a model no route could reach stops start-up instead.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./load.js";

function load(text: string) {
  const dir = mkdtempSync(join(tmpdir(), "gw-config-"));
  writeFileSync(join(dir, "gateway.config.yaml"), text);
  return loadConfig({}, dir);
}

const PROVIDERS = `
providers:
  oai: { type: openai, base_url: "http://127.0.0.1:9/v1", apis: [chat, responses, images, videos] }
  claude: { type: anthropic, base_url: "http://127.0.0.1:9" }
  veo: { type: google-operations, base_url: "http://127.0.0.1:9/v1beta" }
  az: { type: azure-openai, base_url: "https://contoso.openai.azure.com" }
  gem: { type: gemini, base_url: "http://127.0.0.1:9" }
`;

describe("upstream capabilities at config load", () => {
  it("accepts each kind on a type that serves it, with the type's default apis", () => {
    const config = load(`${PROVIDERS}
models:
  - { id: c1, kind: chat, provider: oai }
  - { id: i1, kind: image, provider: oai }
  - { id: v1, kind: video, provider: oai }
  - { id: e1, kind: embedding, provider: oai }
  - { id: c2, kind: chat, provider: claude }
  - { id: v2, kind: video, provider: veo }
  - { id: e2, kind: embedding, provider: az }
  - { id: e3, kind: embedding, provider: gem }
`);
    expect(config.models.size).toBe(8);
    expect([...config.providers.get("oai")!.apis]).toEqual(["chat", "responses", "images", "videos"]);
    expect([...config.providers.get("claude")!.apis]).toEqual([]);
  });

  it.each([
    ["image", "claude", 'models[0].kind: the provider "claude" (type anthropic) cannot serve image models (only chat)'],
    ["video", "claude", 'models[0].kind: the provider "claude" (type anthropic) cannot serve video models (only chat)'],
    ["chat", "veo", 'models[0].kind: the provider "veo" (type google-operations) cannot serve chat models (only video)'],
    ["image", "veo", 'models[0].kind: the provider "veo" (type google-operations) cannot serve image models (only video)'],
    ["embedding", "claude", 'models[0].kind: the provider "claude" (type anthropic) cannot serve embedding models (only chat)'],
    ["embedding", "veo", 'models[0].kind: the provider "veo" (type google-operations) cannot serve embedding models (only video)'],
    ["video", "gem", 'models[0].kind: the provider "gem" (type gemini) cannot serve video models (only chat, embedding)'],
  ])("refuses a %s model on the provider %s", (kind, provider, message) => {
    expect(() => load(`${PROVIDERS}\nmodels:\n  - { id: m, kind: ${kind}, provider: ${provider} }\n`)).toThrow(message);
  });

  it("refuses an api the provider's type does not speak", () => {
    expect(() => load(`providers:\n  claude: { type: anthropic, base_url: "http://127.0.0.1:9", apis: [responses] }\n`)).toThrow(
      'providers.claude.apis: a provider of type anthropic has no "responses" API (it may list: nothing)',
    );
  });

  it("takes api_version on azure-openai only, naming the field", () => {
    const azure = load(`providers:\n  az: { type: azure-openai, base_url: "https://contoso.openai.azure.com", api_version: "2024-10-21", apis: [chat, responses, images] }\n`);
    expect(azure.providers.get("az")!.apiVersion).toBe("2024-10-21");
    expect(load(`providers:\n  az: { type: azure-openai, base_url: "https://contoso.openai.azure.com" }\n`).providers.get("az")!.apiVersion).toBeUndefined();
    expect(() => load(`providers:\n  oai: { type: openai, base_url: "http://127.0.0.1:9/v1", api_version: "2024-10-21" }\n`)).toThrow(
      "providers.oai.api_version: a provider of type openai takes no api_version (only azure-openai)",
    );
    expect(() => load(`providers:\n  az: { type: azure-openai, base_url: "https://contoso.openai.azure.com", api_version: "2024-10-21&x=1" }\n`)).toThrow(
      /providers\.az\.api_version/,
    );
    expect(() => load(`providers:\n  az: { type: azure-openai, base_url: "https://contoso.openai.azure.com", apis: [videos] }\n`)).toThrow(
      'providers.az.apis: a provider of type azure-openai has no "videos" API',
    );
  });

  it("refuses a provider type that is not registered", () => {
    expect(() => load(`providers:\n  b: { type: bedrock, base_url: "http://127.0.0.1:9" }\n`)).toThrow(/providers\.b\.type/);
  });
});
