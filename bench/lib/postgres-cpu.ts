// CPU time of the local PostgreSQL server's processes (every process named "postgres" on this
// machine, from /proc: Linux only), to report what a billing operation costs inside PostgreSQL as well
// as in the gateway process. Null where /proc cannot be read.
import { readdirSync, readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux the bench runs on

/** Microseconds of user + system CPU used so far by the postgres processes (live, and ended ones reaped by the postmaster); null without /proc. */
export function postgresCpuMicros(): number | null {
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return null;
  }
  let ticks = 0;
  for (const pid of pids) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      continue; // ended meanwhile
    }
    // "pid (comm) state ppid …": utime, stime, cutime and cstime are fields 14 to 17, counted after
    // the ")". cutime and cstime are the children that ended (the postmaster's: backends and
    // autovacuum workers that exited), so the sum does not drop when a process ends.
    const close = stat.lastIndexOf(")");
    if (stat.slice(stat.indexOf("(") + 1, close) !== "postgres") continue;
    const fields = stat.slice(close + 2).split(" ");
    ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  }
  return (ticks * 1_000_000) / TICKS_PER_SECOND;
}
