// What `gateway serve` shares between its single process, the cluster primary (workers.ts) and
// the workers it forks (serve.ts): the start-up lines, the drain deadline and the IPC messages.
import type { BootstrapResult } from "../accounts/bootstrap.js";
import type { GatewayConfig } from "../config/load.js";
import type { ReloadOutcome } from "../http/route-context.js";
import type { PrimaryMetricsMessage, WorkerMetricsMessage } from "../observability/cluster-metrics.js";
import type { BillingAnswerBatch, BillingWriteBatch } from "../billing/sqlite-billing-writes.js";
import { upstreamOf } from "../upstreams/registry.js";
import { firstStartMessage } from "./first-start.js";
import type { CliIo } from "./io.js";

/** The environment variable that tells each forked worker how many workers serve the port. */
export const WORKER_COUNT_VARIABLE = "GATEWAY_WORKER_COUNT";

/**
 * Tests only: a process's liveness lease and the hold sweeper's interval in ms (ADR 0054), so that a
 * test sees a killed worker's holds released within seconds instead of within a minute.
 */
export const TEST_HOLD_LIVENESS_VARIABLE = "GATEWAY_TEST_HOLD_LIVENESS_MS";

/** The app option TEST_HOLD_LIVENESS_VARIABLE sets; undefined when it is unset or not a positive integer. */
export function testHoldLiveness(env: NodeJS.ProcessEnv): { ttlMs: number; sweepIntervalMs: number } | undefined {
  const ms = Number(env[TEST_HOLD_LIVENESS_VARIABLE]);
  return Number.isSafeInteger(ms) && ms > 0 ? { ttlMs: ms, sweepIntervalMs: ms } : undefined;
}

/** How long SIGTERM waits for requests in flight before closing what is left. */
export const SHUTDOWN_DEADLINE_MS = 30_000;

/** A worker's reload outcome; failed: an error (the audit log could not record it, ...). */
export type ReloadStatus = ReloadOutcome["status"] | "failed";

/** Worker to primary. */
export type WorkerMessage =
  | { type: "listening"; address: string }
  | { type: "reloaded"; sequence: number; status: ReloadStatus; text: string }
  /** This worker swapped in a new config through the admin API (and recorded it): the others follow. */
  | { type: "reload-peers"; version: string }
  | WorkerMetricsMessage
  /** Admissions, settlements and releases of one turn for the primary to commit (SQLite, decision 0047). */
  | BillingWriteBatch;

/** Primary to worker: reload the config file; audit false when another worker records this reload. */
export type PrimaryMessage = { type: "reload"; sequence: number; audit: boolean } | PrimaryMetricsMessage | BillingAnswerBatch;

/** The start-up lines on stderr: the address, the config in use and, once, the first-start message. */
export function printStartBanner(io: CliIo, config: GatewayConfig, address: string, database: string, first: BootstrapResult | null): void {
  io.stderr(`model-gateway listening on ${address} (${database})\n`);
  const demoModels = [...config.models.values()].filter((m) => upstreamOf(m.provider).capabilities.demo).map((m) => m.id);
  if (!config.sourcePath) {
    io.stderr(
      `No config file: serving the built-in demo models (${demoModels.join(", ")}), made-up answers with no provider key. Copy gateway.config.example.yaml to gateway.config.yaml (or set GATEWAY_CONFIG) to add providers and models.\n`,
    );
  } else {
    io.stderr(`config: ${config.sourcePath} (${config.providers.size} providers, ${config.models.size} models)\n`);
  }
  if (first) io.stderr(firstStartMessage(address, first));
}
