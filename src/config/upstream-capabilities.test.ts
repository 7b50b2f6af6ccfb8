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
`);
    expect(config.models.size).toBe(6);
    expect([...config.providers.get("oai")!.apis]).toEqual(["chat", "responses", "images", "videos"]);
    expect([...config.providers.get("claude")!.apis]).toEqual([]);
  });

  it.each([
    ["image", "claude", 'models[0].kind: the provider "claude" (type anthropic) cannot serve image models (only chat)'],
    ["video", "claude", 'models[0].kind: the provider "claude" (type anthropic) cannot serve video models (only chat)'],
    ["chat", "veo", 'models[0].kind: the provider "veo" (type google-operations) cannot serve chat models (only video)'],
    ["image", "veo", 'models[0].kind: the provider "veo" (type google-operations) cannot serve image models (only video)'],
    ["embedding", "claude", 'models[0].kind: the provider "claude" (type anthropic) cannot serve embedding models (only chat)'],
  ])("refuses a %s model on the provider %s", (kind, provider, message) => {
    expect(() => load(`${PROVIDERS}\nmodels:\n  - { id: m, kind: ${kind}, provider: ${provider} }\n`)).toThrow(message);
  });

  it("refuses an api the provider's type does not speak", () => {
    expect(() => load(`providers:\n  claude: { type: anthropic, base_url: "http://127.0.0.1:9", apis: [responses] }\n`)).toThrow(
      'providers.claude.apis: a provider of type anthropic has no "responses" API (it may list: nothing)',
    );
  });

  it("refuses a provider type that is not registered", () => {
    expect(() => load(`providers:\n  b: { type: bedrock, base_url: "http://127.0.0.1:9" }\n`)).toThrow(/providers\.b\.type/);
  });
});
