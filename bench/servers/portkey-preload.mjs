// Preloaded (--import) into the Portkey gateway process: it calls serve({ port }) and so listens on
// every interface; this forces every TCP listen onto 127.0.0.1, tells the bench the port, and makes
// the process exit when the bench (its parent, over IPC) is gone.
import net from "node:net";

const originalListen = net.Server.prototype.listen;
net.Server.prototype.listen = function listen(...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    // listen(port[, host][, backlog][, callback]): put the host in second place.
    const port = args[0];
    const rest = args.slice(1).filter((a) => typeof a === "function");
    this.once("listening", () => process.send?.({ type: "ready", port: this.address().port }));
    return originalListen.call(this, Number(port), "127.0.0.1", ...rest);
  }
  if (args[0] && typeof args[0] === "object" && !Array.isArray(args[0])) {
    args[0] = { ...args[0], host: "127.0.0.1" };
    this.once("listening", () => process.send?.({ type: "ready", port: this.address().port }));
  }
  return originalListen.apply(this, args);
};

// The same bench-only stats as our gateway process answers: CPU time, RSS, peak RSS (50 ms samples).
let peakRss = process.memoryUsage.rss();
setInterval(() => {
  const rss = process.memoryUsage.rss();
  if (rss > peakRss) peakRss = rss;
}, 50).unref();
process.on("message", (message) => {
  const type = message && message.type;
  if (type === "stats") {
    const memory = process.memoryUsage();
    if (memory.rss > peakRss) peakRss = memory.rss;
    process.send?.({ type: "stats", cpu: process.cpuUsage(), rss: memory.rss, peakRss, memory });
  } else if (type === "reset-peak") {
    peakRss = process.memoryUsage.rss();
    process.send?.({ type: "reset-peak", rss: peakRss });
  } else if (type === "gc") {
    globalThis.gc?.();
    process.send?.({ type: "gc", rss: process.memoryUsage.rss() });
  }
});
process.on("disconnect", () => process.exit(0));
process.on("SIGTERM", () => process.exit(0));
