// Preloaded (--import) into a gateway under the open-streams step (bench/streams.ts), ours and
// Portkey's alike, so that both are measured the same way and neither's code is changed: the
// event-loop delay (how long ready work waited for the loop) since the last reset, CPU time and
// memory, answered over the IPC channel the bench forked it with. The process ends when the bench
// (its parent) is gone.
import { monitorEventLoopDelay } from "node:perf_hooks";

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const ms = (ns) => ns / 1e6;

process.on("message", (message) => {
  const type = message && message.type;
  if (type === "probe-stats") {
    const memory = process.memoryUsage();
    process.send?.({
      type: "probe-stats",
      cpu: process.cpuUsage(),
      rss: memory.rss,
      heapUsed: memory.heapUsed,
      external: memory.external,
      loopDelayMs: { p50: ms(loopDelay.percentile(50)), p99: ms(loopDelay.percentile(99)), max: ms(loopDelay.max) },
    });
  } else if (type === "probe-reset") {
    loopDelay.reset();
    process.send?.({ type: "probe-reset" });
  }
});
// The channel must not keep a gateway alive that would otherwise exit.
process.channel?.unref();
process.on("disconnect", () => process.kill(process.pid, "SIGTERM"));
