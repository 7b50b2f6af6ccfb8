// V8 heap settings for the long-running server (`gateway serve`, `npm start`), measured with the
// bench (bench/README.md, "Second round"): under 50 concurrent connections V8's defaults let the young
// generation grow to 16 MiB semi-spaces and the old generation to about twice the live heap before a
// full collection; peak RSS was 210–224 MiB for ~35 MiB of live objects. With 4 MiB semi-spaces and
// old-generation growth steps of 20% it was 133–135 MiB at the same throughput. Neither is a limit:
// the heap still grows as far as the work needs (no --max-old-space-size, which would turn a burst
// of large request bodies into an out-of-memory crash).
//
// --single-threaded-gc: V8 otherwise runs scavenges and marking on helper threads. On a small machine
// shared with other processes (the upstream, the load, several gateway processes on one host) those
// threads compete with the event loop for the cores: at 1,000 req/s on 2 cores the added p99 was
// 5–7 ms with them and 2.3–2.5 ms without, at the same CPU per request (bench/latency.ts).

/** Flags that only work on node's command line (fixed when V8 starts). */
export const SERVER_NODE_FLAGS = ["--max-semi-space-size=4", "--single-threaded-gc"] as const;

/** Applied at run time by `serve`, however the process was started. */
export function tuneHeapForServing(setFlags: (flags: string) => void): void {
  setFlags("--heap-growing-percent=20");
}
