import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./load.js";

const PROVIDERS = `
providers:
  a: { type: openai, base_url: "http://127.0.0.1:9/v1", keys: [k1] }
  b: { type: anthropic, base_url: "http://127.0.0.1:9", keys: [k2] }
`;

function load(models: string) {
  const dir = mkdtempSync(join(tmpdir(), "gw-routing-"));
  const path = join(dir, "gateway.config.yaml");
  writeFileSync(path, `${PROVIDERS}models:\n${models}`);
  return { config: () => loadConfig({ GATEWAY_CONFIG: path }, dir), path };
}

function refusal(models: string): string {
  const { config, path } = load(models);
  try {
    config();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message.replace(`${path}: `, "");
  }
  throw new Error("the config loaded");
}

describe("routing groups in the config", () => {
  it("builds one view per deployment: its provider, upstream model, price override, window, breaker scope", () => {
    const { config } = load(`
  - id: g
    kind: chat
    context_window: 8000
    pricing: { input_per_mtok: "1", output_per_mtok: "2" }
    routing: { strategy: weighted, context_fallback: true }
    deployments:
      - { name: one, provider: a, weight: 3 }
      - { name: two, provider: b, upstream_model: claude-x, context_window: 200000, priority: 1, pricing: { input_per_mtok: "3", output_per_mtok: "15" } }
`);
    const model = config().models.get("g")!;
    expect(model.provider.name).toBe("a");
    expect(model.group!.strategy).toBe("weighted");
    expect(model.group!.contextFallback).toBe(true);
    const [one, two] = model.group!.deployments;
    expect(one).toMatchObject({ name: "one", weight: 3, priority: 0, bit: 1, breakerScope: "deployment:g/one" });
    expect(one!.model).toMatchObject({ id: "g", deployment: "one", upstreamModel: "g", contextWindow: 8000 });
    expect(one!.model.pricing.inputPerMtok).toBe(1_000_000_000n);
    expect(two).toMatchObject({ name: "two", weight: 1, priority: 1, bit: 2 });
    expect(two!.model).toMatchObject({ deployment: "two", upstreamModel: "claude-x", contextWindow: 200000 });
    expect(two!.model.provider.name).toBe("b");
    expect(two!.model.pricing.outputPerMtok).toBe(15_000_000_000n);
    expect(two!.model.group).toBeUndefined();
  });

  it("keeps the single-provider form as it was: no group, no deployment", () => {
    const model = load(`  - { id: m, kind: chat, provider: a }`).config().models.get("m")!;
    expect(model.group).toBeUndefined();
    expect(model.deployment).toBeUndefined();
  });

  it("refuses mistakes with the field and the reason", () => {
    const group = (deployments: string, extra = "") => `  - id: g\n    kind: chat\n${extra}    deployments:\n${deployments}`;
    expect(refusal(group(`      - { name: x, provider: nope }\n`))).toBe('models[0].deployments[0].provider: provider "nope" is not defined under providers');
    expect(refusal(group(`      - { name: x, provider: a }\n      - { name: y, provider: b }\n      - { name: x, provider: b }\n`))).toBe(
      'models[0].deployments[2].name: duplicate deployment name "x" (also deployments[0])',
    );
    expect(refusal(group(`      - { name: x, provider: a, weight: 2 }\n`))).toBe(
      "models[0].deployments[0].weight: weights apply only to routing.strategy: weighted (this model's strategy is ordered)",
    );
    expect(refusal(group(`      - { name: x, provider: a, weight: 0 }\n`, "    routing: { strategy: weighted }\n"))).toMatch(/^models\[0\]\.deployments\[0\]\.weight: Too small/);
    expect(refusal(group(`      - { name: x, provider: a, weight: 1.5 }\n`, "    routing: { strategy: weighted }\n"))).toMatch(/^models\[0\]\.deployments\[0\]\.weight: /);
    expect(refusal(group(`      - { name: x, provider: a }\n`, "    provider: a\n"))).toBe("models[0].provider: a model lists either provider or deployments, not both");
    expect(refusal(`  - { id: m, kind: chat }\n`)).toBe("models[0].provider: required (or list deployments instead)");
    expect(refusal(`  - { id: m, kind: chat, provider: a, routing: { strategy: weighted } }\n`)).toBe("models[0].routing: applies only to a model that lists deployments");
    expect(refusal(group(`      - { name: x, provider: a }\n`, "    routing: { context_fallback: true }\n"))).toBe(
      "models[0].deployments[0].context_window: required with routing.context_fallback (here or on the model)",
    );
    expect(refusal(`  - id: i\n    kind: image\n    deployments:\n      - { name: x, provider: a }\n`)).toBe(
      "models[0].deployments: routing groups serve chat models only (this model is kind image)",
    );
    expect(refusal(group(`      - { name: "bad name", provider: a }\n`))).toMatch(/^models\[0\]\.deployments\[0\]\.name: letters, digits/);
    expect(refusal(group(""))).toMatch(/^models\[0\]\.deployments: /);
  });
});
