// The `stripe` section: off without it; keys from ${VAR} or a secret file (exactly one form); bounds
// in whole cents as exact nano-USD; the API address for tests; every mistake names its field.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./load.js";

function load(stripe: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "gw-stripe-config-"));
  writeFileSync(join(dir, "gateway.config.yaml"), `demo: true\n${stripe}`);
  writeFileSync(join(dir, "whsec.txt"), "whsec_from_file\n");
  return () => loadConfig({ ...env, GATEWAY_DATA_DIR: dir }, dir);
}

describe("the stripe section", () => {
  it("is off without the section", () => {
    expect(load("")().stripe).toBeNull();
  });

  it("reads the keys from the environment and a secret file, with the bounds as nano-USD", () => {
    const config = load(
      `stripe:\n  secret_key: \${STRIPE_KEY}\n  webhook_secret_file: whsec.txt\n  min_topup_usd: "2.50"\n  max_topup_usd: "250"\n  api_base: http://127.0.0.1:12111\n`,
      { STRIPE_KEY: "sk_test_env" },
    )();
    expect(config.stripe).toMatchObject({
      secretKey: "sk_test_env",
      webhookSecret: "whsec_from_file",
      currency: "usd",
      minTopup: 2_500_000_000n,
      maxTopup: 250_000_000_000n,
      toleranceS: 300,
      api: { protocol: "http", host: "127.0.0.1", port: 12111 },
    });
  });

  it("names the field of each mistake", () => {
    const base = "  secret_key: sk\n  webhook_secret: wh\n";
    expect(load("stripe:\n  webhook_secret: wh\n")).toThrow(/stripe\.secret_key: give secret_key/);
    expect(load(`stripe:\n${base}  secret_key_file: nope.txt\n`)).toThrow(/stripe\.secret_key: give secret_key/);
    expect(load("stripe:\n  secret_key: sk\n  webhook_secret_file: missing.txt\n")).toThrow(/stripe\.webhook_secret_file: cannot be read/);
    expect(load(`stripe:\n${base}  min_topup_usd: "1.005"\n`)).toThrow(/stripe\.min_topup_usd: must be whole cents/);
    expect(load(`stripe:\n${base}  min_topup_usd: "0.10"\n`)).toThrow(/stripe\.min_topup_usd: .* from 0\.50/);
    expect(load(`stripe:\n${base}  min_topup_usd: "50"\n  max_topup_usd: "10"\n`)).toThrow(/stripe\.max_topup_usd: must be at least/);
    expect(load(`stripe:\n${base}  currency: eur\n`)).toThrow(/stripe\.currency/);
    expect(load(`stripe:\n${base}  api_base: http://127.0.0.1:1/v1\n`)).toThrow(/stripe\.api_base/);
  });
});
