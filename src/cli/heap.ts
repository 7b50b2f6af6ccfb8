// V8 heap settings for the long-running server (`gateway serve`, `npm start`), measured with the
// bench (bench/results/history/2026-11-23T0641-second-round.md): under 50 concurrent connections V8's defaults let the young
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
//
// glibc's allocator, for the native side (sockets, SQLite, zlib, Buffers' backing stores):
// - MALLOC_ARENA_MAX=2: each thread that allocates (the SQLite checkpointer's worker, the thread
//   pool) otherwise gets an arena of its own, and memory freed in one stays with it.
// - MALLOC_MMAP_THRESHOLD_=131072: blocks of 128 KiB and more always get their own mapping, returned
//   to the system when freed. By default glibc raises this threshold (up to 32 MiB) each time such a
//   block is freed, after which large blocks come from the arenas, where freed space goes back to
//   the system only from the top of an arena. A lower threshold (64 KiB, with a 128 KiB trim
//   threshold) measured up to half the throughput: not kept.
// Peak RSS under wrk, same-run A/B (bench/results/history/2026-11-23T1215-third-round.md): glibc's defaults 163–175 MiB,
// two arenas 155–166, both settings 130–158, at the same CPU per request. Other C libraries ignore
// the variables.

/** Flags that only work on node's command line (fixed when V8 starts). */
export const SERVER_NODE_FLAGS = ["--max-semi-space-size=4", "--single-threaded-gc"] as const;

/** Environment for node's process; read by the C library as the process starts, so set outside it. */
export const SERVER_ENV = { MALLOC_ARENA_MAX: "2", MALLOC_MMAP_THRESHOLD_: "131072" } as const;

/** Applied at run time by `serve`, however the process was started. */
export function tuneHeapForServing(setFlags: (flags: string) => void): void {
  setFlags("--heap-growing-percent=20");
}
