// The bench's targets: the one ordered list a run starts them in (bench.ts filters it) and the report
// sorts its tables by (report.ts), their labels, and which of them are several processes.

/** Every target, in start and report order. */
export const ALL_TARGETS = [
  "direct",
  "floor",
  "ours-sqlite",
  "ours-sqlite-metrics",
  "ours-sqlite-nolog",
  "ours-sqlite-nobill",
  "ours-sqlite-limits",
  "ours-pg",
  "ours-pg-nobill",
  "ours-pg-limits",
  "peer",
  "floor-2p",
  "ours-sqlite-2w",
  "ours-sqlite-2w-primary",
  "ours-sqlite-4w",
  "ours-sqlite-4w-primary",
  "ours-pg-2w",
] as const;
export type TargetName = (typeof ALL_TARGETS)[number];

export const TARGET_LABELS: Record<TargetName, string> = {
  direct: "direct (mock upstream)",
  floor: "floor: a minimal Node.js proxy",
  "ours-sqlite": "ours, SQLite, billing on",
  "ours-sqlite-metrics": "ours, SQLite, billing on, metrics on, tracing off",
  "ours-sqlite-nolog": "ours, SQLite, billing on, request log off",
  "ours-sqlite-nobill": "ours, SQLite, billing off",
  "ours-sqlite-limits": "ours, SQLite, billing on, limits enabled",
  "ours-pg": "ours, PostgreSQL, billing on",
  "ours-pg-nobill": "ours, PostgreSQL, billing off",
  "ours-pg-limits": "ours, PostgreSQL, billing on, limits enabled",
  peer: "peer (Portkey gateway)",
  "floor-2p": "floor: minimal Node.js proxy, 2 processes",
  "ours-sqlite-2w": "ours, SQLite, billing on, 2 workers",
  "ours-sqlite-2w-primary": "ours, SQLite, billing on, 2 workers, billing written by the primary",
  "ours-sqlite-4w": "ours, SQLite, billing on, 4 workers",
  "ours-sqlite-4w-primary": "ours, SQLite, billing on, 4 workers, billing written by the primary",
  "ours-pg-2w": "ours, PostgreSQL, billing on, 2 workers",
};

/**
 * Several processes behind one port (`serve --workers 2`, and the floor's 2 processes as the ceiling
 * this machine leaves): measured for maximum throughput only (after a 1 s warm-up), where the ratio
 * to one process is the question; their RSS figures are the largest worker's.
 */
export const CLUSTER_TARGETS: readonly TargetName[] = ["floor-2p", "ours-sqlite-2w", "ours-sqlite-2w-primary", "ours-sqlite-4w", "ours-sqlite-4w-primary", "ours-pg-2w"];

/** Targets on PostgreSQL (left out when it does not answer). */
export const POSTGRES_TARGETS: readonly TargetName[] = ALL_TARGETS.filter((name) => name.startsWith("ours-pg"));

/** Position in ALL_TARGETS, for sorting report rows. */
export function targetOrder(name: TargetName): number {
  return ALL_TARGETS.indexOf(name);
}
