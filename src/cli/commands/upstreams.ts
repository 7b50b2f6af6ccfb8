// `gateway admin upstreams status`: every upstream key's circuit breaker as the gateway processes
// last wrote it to upstream_health, then every routing-group deployment's (the same statuses as
// GET /dashboard/api/admin/upstreams).
import type { GatewayConfig } from "../../config/load.js";
import type { Store } from "../../store/index.js";
import { upstreamStatuses, type BreakerStatus } from "../../pipeline/upstream-status.js";
import { emit, parseCommand, table, UsageError, type CliIo } from "../io.js";

export async function upstreamsCommand(sub: string | undefined, args: string[], io: CliIo, store: Store, config: GatewayConfig): Promise<void> {
  if (sub !== "status") throw new UsageError("usage: gateway admin upstreams status [--json]");
  const { json } = parseCommand(args, {}, []);
  const statuses = await upstreamStatuses(store, config);
  emit(io, json, statuses, () =>
    table([
      ...statuses.keys.map((s) => ({ provider: s.provider, owner: s.account_email ?? "shared", key: s.fingerprint, ...breakerColumns(s) })),
      ...statuses.deployments.map((s) => ({ provider: s.provider, owner: "shared", key: `deployment ${s.deployment}`, ...breakerColumns(s) })),
    ]),
  );
}

function breakerColumns(s: BreakerStatus) {
  return {
    state: s.state,
    cooldown_s: s.cooldown_seconds,
    errors: s.error_rate === null ? null : `${Math.round(s.error_rate * 100)}% of ${s.requests}`,
    p50_ms: s.p50_ms,
    rate_limit_cooldown_s: s.rate_limit_cooldown_seconds,
    last_error: s.last_error,
  };
}
