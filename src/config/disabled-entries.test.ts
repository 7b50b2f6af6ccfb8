// `disabled: true` on a provider or a model in the config file (issue 40): the entry is still
// checked, but a disabled model is not in the runtime catalogue, and a disabled provider's
// deployments are left out of their groups (a model with nothing left is not served either).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./load.js";

function load(yaml: string) {
  const dir = mkdtempSync(join(tmpdir(), "gw-disabled-"));
  const path = join(dir, "gateway.config.yaml");
  writeFileSync(path, yaml);
  return loadConfig({ GATEWAY_CONFIG: path }, dir);
}

const FILE = (providerB: string, modelC: string) => `
providers:
  a: { type: openai, base_url: "http://127.0.0.1:9/v1", keys: [k1] }
  b: { type: openai, base_url: "http://127.0.0.1:9/v1", keys: [k2]${providerB} }
models:
  - { id: on-a, kind: chat, provider: a }
  - { id: on-b, kind: chat, provider: b }
  - id: group
    kind: chat
    deployments: [{ name: first, provider: b }, { name: second, provider: a }]
  - { id: off, kind: chat, provider: a${modelC} }
`;

describe("disabled providers and models in the config file", () => {
  it("serves every entry when nothing is disabled", () => {
    const config = load(FILE("", ""));
    expect([...config.models.keys()]).toEqual(["on-a", "on-b", "group", "off"]);
    expect(config.models.get("group")!.group!.deployments.map((d) => d.name)).toEqual(["first", "second"]);
  });

  it("leaves a disabled model and a disabled provider's deployments out, keeping the provider defined", () => {
    const config = load(FILE(", disabled: true", ", disabled: true"));
    expect([...config.models.keys()]).toEqual(["on-a", "group"]);
    const group = config.models.get("group")!;
    expect(group.group!.deployments.map((d) => [d.name, d.bit])).toEqual([["second", 2]]);
    expect(group.provider.name).toBe("a");
    expect(config.providers.has("b")).toBe(true);
  });

  it("still checks a disabled entry", () => {
    expect(() => load(FILE(', disabled: true, apis: ["videos", "nope"]', ""))).toThrow(ConfigError);
    expect(() => load(FILE("", ", disabled: true, pricing: { input_per_mtok: abc }"))).toThrow(/models\[3\]\.pricing\.input_per_mtok/);
  });
});
