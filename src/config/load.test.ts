import { createHash } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_BREAKER_SETTINGS } from "../upstreams/circuit-breaker.js";
import { configChanges } from "./config-diff.js";
import { ConfigError, loadConfig, restartOnlyChanges } from "./load.js";

function withFile(text: string): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), "gw-config-"));
  const path = join(dir, "gateway.config.yaml");
  writeFileSync(path, text);
  return { dir, path };
}

const MINIMAL = `
providers:
  mock: { type: openai, base_url: "http://127.0.0.1:9/v1", keys: ["\${MOCK_KEY}"] }
models:
  - { id: m1, kind: chat, provider: mock, pricing: { input_per_mtok: "0.0375", output_per_mtok: 2 } }
tiers:
  basic: { models: [m1] }
`;

describe("loadConfig", () => {
  it("starts with the demo catalog when there is no file", () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-config-"));
    const config = loadConfig({}, dir);
    expect(config.sourcePath).toBeNull();
    expect([...config.models.keys()]).toEqual(["demo-chat", "demo-fast"]);
    expect(config.models.get("demo-chat")!.provider).toMatchObject({ name: "demo", type: "demo" });
    expect(config.models.get("demo-chat")!.tiers).toEqual(["default"]);
    expect(config.defaultTier).toBe("default");
    expect(config.bodyLimitBytes).toBe(16 * 1024 * 1024);
    expect(config.port).toBe(8080);
  });

  it("demo catalog: off once the file defines providers, on with demo: true, off with demo: false", () => {
    expect([...loadConfig({ MOCK_KEY: "k" }, withFile(MINIMAL).dir).models.keys()]).toEqual(["m1"]);
    expect(loadConfig({ MOCK_KEY: "k" }, withFile(MINIMAL).dir).providers.has("demo")).toBe(false);
    // A file without providers (server settings only) still gets it.
    expect([...loadConfig({}, withFile("server: { body_limit_mb: 2 }").dir).models.keys()]).toEqual(["demo-chat", "demo-fast"]);
    expect(loadConfig({}, withFile("demo: false").dir).models.size).toBe(0);
    const both = loadConfig({ MOCK_KEY: "k" }, withFile(`demo: true\n${MINIMAL}`).dir);
    expect([...both.models.keys()]).toEqual(["m1", "demo-chat", "demo-fast"]);
    // Tiers that do not list the demo models leave them in no tier.
    expect(both.models.get("demo-chat")!.tiers).toEqual([]);
    expect(both.models.get("demo-chat")!.pricing.outputPerMtok).toBe(1_500_000_000n);
  });

  it("demo: true refuses a provider or model that takes a demo name", () => {
    const provider = withFile('demo: true\nproviders:\n  demo: { type: openai, base_url: "http://127.0.0.1:9/v1" }\n');
    expect(() => loadConfig({}, provider.dir)).toThrow(/providers\.demo: the name is taken by the demo provider/);
    const model = withFile(`demo: true\n${MINIMAL.replace("id: m1", "id: demo-chat").replace("[m1]", "[demo-chat]")}`);
    expect(() => loadConfig({ MOCK_KEY: "k" }, model.dir)).toThrow(/models\[0\]\.id: "demo-chat" is a demo model's id/);
  });

  it("upstream_health: documented defaults, overrides, and a threshold outside (0, 1] refused", () => {
    expect(loadConfig({}, mkdtempSync(join(tmpdir(), "gw-config-"))).upstreamHealth).toEqual(DEFAULT_BREAKER_SETTINGS);
    expect(DEFAULT_BREAKER_SETTINGS).toEqual({ windowMs: 30_000, minRequests: 10, failureThreshold: 0.5, openMs: 30_000, halfOpenTrials: 1 });
    const custom = withFile("upstream_health: { window_ms: 10000, min_requests: 3, failure_threshold: 0.25, open_ms: 5000, half_open_trials: 2 }");
    expect(loadConfig({}, custom.dir).upstreamHealth).toEqual({ windowMs: 10_000, minRequests: 3, failureThreshold: 0.25, openMs: 5_000, halfOpenTrials: 2 });
    const zero = withFile("upstream_health: { failure_threshold: 0 }");
    expect(() => loadConfig({}, zero.dir)).toThrow(/upstream_health.failure_threshold/);
  });

  it("billing.clamp.min_output_tokens: 256 by default, read when set, refused outside 1..1,000,000", () => {
    expect(loadConfig({}, mkdtempSync(join(tmpdir(), "gw-config-"))).billing).toEqual({ clampMinOutputTokens: 256 });
    expect(loadConfig({}, withFile("billing: { clamp: { min_output_tokens: 1000 } }").dir).billing).toEqual({ clampMinOutputTokens: 1000 });
    for (const bad of ["0", "1.5", "1000001", '"many"']) {
      expect(() => loadConfig({}, withFile(`billing: { clamp: { min_output_tokens: ${bad} } }`).dir)).toThrow(/billing.clamp.min_output_tokens/);
    }
    expect(() => loadConfig({}, withFile("billing: { clamp: { minimum: 5 } }").dir)).toThrow(/billing.clamp/);
  });

  it("request_log: on with 30 days by default, read when set, off with enabled: false, bounds refused", () => {
    expect(loadConfig({}, mkdtempSync(join(tmpdir(), "gw-config-"))).requestLog).toEqual({ retentionDays: 30, maxBuffered: 20_000, flushIntervalMs: 500 });
    const custom = withFile("request_log: { retention_days: 7, max_buffered: 500, flush_interval_ms: 100 }");
    expect(loadConfig({}, custom.dir).requestLog).toEqual({ retentionDays: 7, maxBuffered: 500, flushIntervalMs: 100 });
    expect(loadConfig({}, withFile("request_log: { enabled: false }").dir).requestLog).toBeNull();
    for (const bad of ["retention_days: 0", "retention_days: 3651", "max_buffered: 10", "flush_interval_ms: 0", "keep: forever"]) {
      expect(() => loadConfig({}, withFile(`request_log: { ${bad} }`).dir)).toThrow(/request_log/);
    }
  });

  it("reads the default file, substitutes env vars and converts prices exactly", () => {
    const { dir } = withFile(MINIMAL);
    const config = loadConfig({ MOCK_KEY: "sk-test" }, dir);
    expect(config.providers.get("mock")!.sharedKeys).toEqual(["sk-test"]);
    const model = config.models.get("m1")!;
    expect(model.pricing.inputPerMtok).toBe(37_500_000n);
    expect(model.pricing.cachedInputPerMtok).toBe(37_500_000n);
    expect(model.pricing.outputPerMtok).toBe(2_000_000_000n);
    expect(model.upstreamModel).toBe("m1");
    expect(model.tiers).toEqual(["basic"]);
    expect(config.defaultTier).toBe("basic");
  });

  it("tiers.<tier>.limits: read per tier, bounded, and model ids must be the tier's", () => {
    const limited = MINIMAL.replace(
      "basic: { models: [m1] }",
      "basic: { models: [m1], limits: { key: { requests_per_minute: 60 }, account: { concurrent_requests: 5 }, models: { m1: { key: { tokens_per_minute: 1000 } } } } }",
    );
    const config = loadConfig({ MOCK_KEY: "k" }, withFile(limited).dir);
    const tier = config.tierLimits.get("basic")!;
    expect(tier.key).toEqual({ requestsPerMinute: 60, tokensPerMinute: null, concurrentRequests: null });
    expect(tier.account).toEqual({ requestsPerMinute: null, tokensPerMinute: null, concurrentRequests: 5 });
    expect(tier.models.get("m1")!.key.tokensPerMinute).toBe(1000);
    for (const [bad, pattern] of [
      ["{ key: { requests_per_minute: 0 } }", /tiers\.basic\.limits\.key\.requests_per_minute/],
      ["{ key: { rpm: 5 } }", /tiers\.basic\.limits\.key/],
      ["{ models: { m9: { key: { requests_per_minute: 5 } } } }", /tiers\.basic\.limits\.models: model "m9" is not a model of the tier basic/],
    ] as const) {
      expect(() => loadConfig({ MOCK_KEY: "k" }, withFile(MINIMAL.replace("basic: { models: [m1] }", `basic: { models: [m1], limits: ${bad} }`)).dir)).toThrow(pattern);
    }
  });

  it("names the file, the field and the problem", () => {
    const cases: Array<[string, Record<string, string>, RegExp]> = [
      [MINIMAL, {}, /gateway\.config\.yaml: providers\.mock\.keys\[0\]: environment variable MOCK_KEY is not set/],
      [MINIMAL.replace("kind: chat", "kind: audio"), { MOCK_KEY: "k" }, /gateway\.config\.yaml: models\[0\]\.kind: /],
      [MINIMAL.replace("provider: mock,", "provider: nope,"), { MOCK_KEY: "k" }, /models\[0\]\.provider: provider "nope" is not defined/],
      [MINIMAL.replace('"0.0375"', '"cheap"'), { MOCK_KEY: "k" }, /models\[0\]\.pricing\.input_per_mtok: "cheap" is not a non-negative USD amount/],
      [MINIMAL.replace("models: [m1]", "models: [m2]"), { MOCK_KEY: "k" }, /tiers\.basic\.models: model "m2" is not defined/],
      [MINIMAL.replace('base_url: "http://127.0.0.1:9/v1"', "base_url: nowhere"), { MOCK_KEY: "k" }, /providers\.mock\.base_url: /],
      ["models: [", {}, /gateway\.config\.yaml: not valid YAML/],
      [MINIMAL + "\nextra: 1\n", { MOCK_KEY: "k" }, /gateway\.config\.yaml: \(top level\): .*extra/],
    ];
    for (const [text, env, pattern] of cases) {
      const { dir } = withFile(text);
      expect(() => loadConfig(env, dir)).toThrow(ConfigError);
      expect(() => loadConfig(env, dir)).toThrow(pattern);
    }
  });

  it("loads the shipped example with every key variable set", () => {
    const config = loadConfig(
      { GATEWAY_CONFIG: new URL("../../gateway.config.example.yaml", import.meta.url).pathname, OPENAI_API_KEY: "a", ANTHROPIC_API_KEY: "b", GEMINI_API_KEY: "c" },
      "/",
    );
    expect(config.models.get("gpt-4o-mini")!.pricing.outputPerMtok).toBe(600_000_000n);
    expect(config.models.get("claude-sonnet-4-5")!.upstreamModel).toBe("claude-sonnet-4-5-20250929");
    expect(config.models.get("claude-haiku-4-5")!.tiers).toEqual(["free", "standard"]);
  });

  it("reads the media section and names a bad media field", () => {
    const { dir } = withFile(`${MINIMAL}\nmedia: { video_poll_interval_ms: 5000, video_task_ttl_hours: 2 }\n`);
    expect(loadConfig({ MOCK_KEY: "k" }, dir).media).toEqual({ video_poll_interval_ms: 5000, video_task_ttl_hours: 2 });
    const bad = withFile(`${MINIMAL}\nmedia: { default_video_seconds: 0 }\n`);
    expect(() => loadConfig({ MOCK_KEY: "k" }, bad.dir)).toThrow(/media\.default_video_seconds/);
  });

  it("reads server.trusted_proxies (IPv4, IPv6, CIDR; none by default) and names a bad entry", () => {
    expect(loadConfig({}, mkdtempSync(join(tmpdir(), "gw-"))).trustedProxies.size).toBe(0);
    const { dir } = withFile(`${MINIMAL}\nserver: { trusted_proxies: ["127.0.0.1", "10.0.0.0/8", "::1", "fd00::/8"] }\n`);
    const proxies = loadConfig({ MOCK_KEY: "k" }, dir).trustedProxies;
    expect(["127.0.0.1", "10.200.3.4", "::1", "fd12::9", "::ffff:10.1.1.1"].map((a) => proxies.isTrusted(a))).toEqual([true, true, true, true, true]);
    expect(["127.0.0.2", "11.0.0.1", "::2", "fe80::1", "", undefined].map((a) => proxies.isTrusted(a))).toEqual([false, false, false, false, false, false]);
    const cases: Array<[string, RegExp]> = [
      ['["10.0.0.0/33"]', /server\.trusted_proxies\[0\]: "10\.0\.0\.0\/33": the prefix length after "\/" must be a whole number from 0 to 32/],
      ['["127.0.0.1", "fd00::/129"]', /server\.trusted_proxies\[1\]: .* from 0 to 128/],
      ['["10.0.0.0/"]', /server\.trusted_proxies\[0\]: .*prefix length/],
      ['["localhost"]', /server\.trusted_proxies\[0\]: "localhost" is not an IPv4 or IPv6 address or CIDR range/],
      ['["10.0.0"]', /server\.trusted_proxies\[0\]: "10\.0\.0" is not an IPv4/],
      ['["fe80::1%eth0"]', /server\.trusted_proxies\[0\]: .* is not an IPv4/],
      ['"10.0.0.1"', /server\.trusted_proxies: /],
    ];
    for (const [list, pattern] of cases) {
      const bad = withFile(`${MINIMAL}\nserver: { trusted_proxies: ${list} }\n`);
      expect(() => loadConfig({ MOCK_KEY: "k" }, bad.dir)).toThrow(ConfigError);
      expect(() => loadConfig({ MOCK_KEY: "k" }, bad.dir)).toThrow(pattern);
    }
  });

  it("has connection limits by default, reads them from server, and keeps headers within the request timeout", () => {
    const defaults = loadConfig({}, mkdtempSync(join(tmpdir(), "gw-config-")));
    expect(defaults.connections).toEqual({ headersTimeoutMs: 15_000, requestTimeoutMs: 120_000, keepAliveTimeoutMs: 65_000, maxConnections: 4096 });
    const { dir } = withFile(`${MINIMAL}\nserver: { headers_timeout_ms: 500, request_timeout_ms: 900, keep_alive_timeout_ms: 700, max_connections: 3 }\n`);
    expect(loadConfig({ MOCK_KEY: "k" }, dir).connections).toEqual({ headersTimeoutMs: 500, requestTimeoutMs: 900, keepAliveTimeoutMs: 700, maxConnections: 3 });
    const inverted = withFile(`${MINIMAL}\nserver: { headers_timeout_ms: 5000, request_timeout_ms: 1000 }\n`);
    expect(() => loadConfig({ MOCK_KEY: "k" }, inverted.dir)).toThrow(/server\.headers_timeout_ms: must not exceed server\.request_timeout_ms/);
    const zero = withFile(`${MINIMAL}\nserver: { max_connections: 0 }\n`);
    expect(() => loadConfig({ MOCK_KEY: "k" }, zero.dir)).toThrow(/server\.max_connections/);
  });

  it("sign-up: open on the demo first run, closed once providers are configured, as written otherwise; link lifetime bounded", () => {
    const load = (text: string) => loadConfig({ MOCK_KEY: "k" }, withFile(text).dir);
    expect(loadConfig({}, mkdtempSync(join(tmpdir(), "gw-config-"))).signup).toBe("open");
    expect(load("server: { body_limit_mb: 2 }").signup).toBe("open");
    expect(load(MINIMAL).signup).toBe("closed");
    expect(load(`demo: true\n${MINIMAL}`).signup).toBe("closed");
    expect(load(`${MINIMAL}\nserver: { signup: open }\n`).signup).toBe("open");
    expect(load(`${MINIMAL}\nserver: { signup: invite }\n`).signup).toBe("invite");
    // The earlier name of invite.
    expect(load(`${MINIMAL}\nserver: { signup: invite_only }\n`).signup).toBe("invite");
    expect(load("server: { signup: closed }").signup).toBe("closed");
    expect(() => load(`${MINIMAL}\nserver: { signup: maybe }\n`)).toThrow(/server\.signup/);
    expect(load(MINIMAL).passwordLinkTtlMs).toBe(24 * 3_600_000);
    expect(load(`${MINIMAL}\nserver: { password_link_ttl_hours: 72 }\n`).passwordLinkTtlMs).toBe(72 * 3_600_000);
    for (const bad of [0, 169, 1.5, '"24"']) {
      expect(() => load(`${MINIMAL}\nserver: { password_link_ttl_hours: ${bad} }\n`)).toThrow(/server\.password_link_ttl_hours/);
    }
  });

  it("rejects a GATEWAY_CONFIG that does not exist and a bad PORT", () => {
    expect(() => loadConfig({ GATEWAY_CONFIG: "/nonexistent.yaml" }, "/")).toThrow(/nonexistent\.yaml: file not found/);
    expect(() => loadConfig({ PORT: "http" }, mkdtempSync(join(tmpdir(), "gw-")))).toThrow(/PORT/);
  });

  it("GATEWAY_LEDGER_SECRET: none when unset or empty, refused under 16 characters, restart-only", () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-"));
    expect(loadConfig({}, dir).ledgerSecret).toBeNull();
    expect(loadConfig({ GATEWAY_LEDGER_SECRET: "" }, dir).ledgerSecret).toBeNull();
    expect(() => loadConfig({ GATEWAY_LEDGER_SECRET: "short" }, dir)).toThrow(/GATEWAY_LEDGER_SECRET: at least 16 characters/);
    const keyed = loadConfig({ GATEWAY_LEDGER_SECRET: "0123456789abcdef" }, dir);
    expect(keyed.ledgerSecret).toBe("0123456789abcdef");
    expect(restartOnlyChanges(loadConfig({}, dir), keyed)).toEqual(["GATEWAY_LEDGER_SECRET"]);
  });

  it("pricing: every dimension's key, the documented defaults, and a long_context tier", () => {
    const file = withFile(`
providers:
  mock: { type: anthropic, base_url: "http://127.0.0.1:9", keys: ["k"] }
models:
  - id: plain
    kind: chat
    provider: mock
    pricing: { input_per_mtok: "3" }
  - id: full
    kind: chat
    provider: mock
    pricing:
      input_per_mtok: "3"
      cache_write_5m_per_mtok: "3.75"
      output_per_mtok: "15"
      web_search_per_call: "0.01"
      per_request: "0.0001"
      long_context: { above_input_tokens: 200000, input_per_mtok: "6", output_per_mtok: "22.50" }
`);
    const config = loadConfig({}, file.dir);
    // Not configured: cache reads and 5-minute writes at the input price, 1-hour writes at the 5-minute price, the rest 0.
    expect(config.models.get("plain")!.pricing).toMatchObject({
      inputPerMtok: 3_000_000_000n,
      cachedInputPerMtok: 3_000_000_000n,
      cacheWrite5mPerMtok: 3_000_000_000n,
      cacheWrite1hPerMtok: 3_000_000_000n,
      outputPerMtok: 0n,
      webSearchPerCall: 0n,
      perRequest: 0n,
    });
    expect(config.models.get("plain")!.pricing.longContext).toBeUndefined();
    const full = config.models.get("full")!.pricing;
    expect(full).toMatchObject({ cacheWrite5mPerMtok: 3_750_000_000n, cacheWrite1hPerMtok: 3_750_000_000n, webSearchPerCall: 10_000_000n, perRequest: 100_000n });
    // A tier's price not configured is the base price of the same dimension.
    expect(full.longContext).toEqual({
      aboveInputTokens: 200_000,
      inputPerMtok: 6_000_000_000n,
      cachedInputPerMtok: 3_000_000_000n,
      cacheWrite5mPerMtok: 3_750_000_000n,
      cacheWrite1hPerMtok: 3_750_000_000n,
      outputPerMtok: 22_500_000_000n,
    });
    const bad = withFile(`
providers:
  mock: { type: anthropic, base_url: "http://127.0.0.1:9", keys: ["k"] }
models:
  - { id: m, kind: chat, provider: mock, pricing: { long_context: { above_input_tokens: 0 } } }
`);
    expect(() => loadConfig({}, bad.dir)).toThrow(ConfigError);
    const negative = withFile(`
providers:
  mock: { type: anthropic, base_url: "http://127.0.0.1:9", keys: ["k"] }
models:
  - { id: m, kind: chat, provider: mock, pricing: { long_context: { above_input_tokens: 10, cache_write_1h_per_mtok: "-1" } } }
`);
    expect(() => loadConfig({}, negative.dir)).toThrow(/long_context.cache_write_1h_per_mtok/);
  });
});

describe("reload support", () => {
  it("versions a config by the SHA-256 of its file's bytes", () => {
    const { dir } = withFile(MINIMAL);
    expect(loadConfig({ MOCK_KEY: "k" }, dir).version).toBe(createHash("sha256").update(MINIMAL).digest("hex"));
    // Without a file: the hash of nothing.
    expect(loadConfig({}, mkdtempSync(join(tmpdir(), "gw-config-"))).version).toBe(createHash("sha256").update("").digest("hex"));
  });

  it("names the restart-only settings a new config changes, and nothing for catalog changes", () => {
    // One directory, as a reload reads the same path (the data directory is relative to it).
    const { dir, path } = withFile(MINIMAL);
    const running = loadConfig({ MOCK_KEY: "k" }, dir);
    writeFileSync(path, MINIMAL.replace('"0.0375"', '"0.05"'));
    expect(restartOnlyChanges(running, loadConfig({ MOCK_KEY: "other" }, dir))).toEqual([]);
    writeFileSync(path, `${MINIMAL}server: { body_limit_mb: 2, max_connections: 10, trusted_proxies: ["10.0.0.0/8"] }\nupstream_health: { open_ms: 1000 }\n`);
    expect(restartOnlyChanges(running, loadConfig({ MOCK_KEY: "k", PORT: "9000" }, dir))).toEqual([
      "PORT",
      "server.body_limit_mb",
      "server.max_connections",
      "server.trusted_proxies",
      "upstream_health",
    ]);
  });

  it("reports catalog changes by name: added, removed and changed models and providers", () => {
    const before = loadConfig({ MOCK_KEY: "k" }, withFile(MINIMAL).dir);
    const after = loadConfig(
      { MOCK_KEY: "rotated" },
      withFile(MINIMAL.replace('"0.0375"', '"0.05"').replace("tiers:", "  - { id: m2, kind: chat, provider: mock, pricing: { input_per_mtok: 1, output_per_mtok: 2 } }\ntiers:"))
        .dir,
    );
    expect(configChanges(before, after)).toEqual({
      modelsAdded: ["m2"],
      modelsRemoved: [],
      modelsChanged: ["m1"],
      providersAdded: [],
      providersRemoved: [],
      providersChanged: ["mock"],
    });
    expect(configChanges(before, before)).toEqual({ modelsAdded: [], modelsRemoved: [], modelsChanged: [], providersAdded: [], providersRemoved: [], providersChanged: [] });
  });
});
