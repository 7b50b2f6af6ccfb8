// The config file and environment of a bench gateway (servers/gateway.ts, one process, and
// servers/gateway-cluster.ts, `serve --workers N`): the mock upstream as the one provider, one
// priced model, a fresh data directory, and the opt-ins the bench compares (metrics, request log).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_MODEL } from "../lib/constants.js";

export interface BenchGatewaySetup {
  /** A temp dir holding the config file and, for SQLite, the data directory (the caller removes it). */
  dir: string;
  /** What `gateway serve` reads: GATEWAY_CONFIG, the data dir, the secret, host and port 0, DATABASE_URL. */
  env: NodeJS.ProcessEnv;
}

export function writeBenchConfig(options: { mockUrl: string; metricsOn: boolean; requestLogOff: boolean }): BenchGatewaySetup {
  const dir = mkdtempSync(join(tmpdir(), "gw-bench-"));
  const configPath = join(dir, "gateway.config.yaml");
  writeFileSync(
    configPath,
    `
providers:
  mockai:
    type: openai
    base_url: "${options.mockUrl}/v1"
    keys: ["sk-bench-upstream-key-000000000001"]
    apis: [chat]
models:
  - id: ${BENCH_MODEL}
    kind: chat
    provider: mockai
    upstream_model: upstream-gpt
    context_window: 128000
    max_output_tokens: 4096
    default_output_tokens: 256
    pricing: { input_per_mtok: "1.00", cached_input_per_mtok: "0.50", output_per_mtok: "2.00" }
tiers:
  standard: { models: [${BENCH_MODEL}] }
server:
  default_tier: standard
${options.metricsOn ? "metrics:\n  token_env: BENCH_METRICS_TOKEN\n" : ""}${options.requestLogOff ? "request_log:\n  enabled: false\n" : ""}`,
  );
  const env: NodeJS.ProcessEnv = {
    GATEWAY_CONFIG: configPath,
    GATEWAY_DATA_DIR: join(dir, "data"),
    GATEWAY_SECRET: "bench-secret-0123456789abcdefghijklmnop",
    PORT: "0",
    HOST: "127.0.0.1",
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
    ...(options.metricsOn ? { BENCH_METRICS_TOKEN: "bench-metrics-token-0123456789" } : {}),
    ...(process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {}),
  };
  return { dir, env };
}
