// Open-file limits for the open-streams step: 10,000 streams need about 20,000 descriptors in our
// gateway (a client socket and an upstream socket each) and 10,000 in the mock and the clients,
// above the usual 1,024 (soft) and often above the hard limit. The bench raises the limits of its
// own processes with prlimit(1) (as root it may raise the hard limit; otherwise only the soft one, up
// to the hard). The gateway's own defaults are not changed: an operator sets the limit of the
// service (systemd's LimitNOFILE, `ulimit -n`, a container's ulimits), as docs/operations.md says.
import { execFileSync } from "node:child_process";

export interface FileLimit {
  pid: number;
  soft: number;
  hard: number;
  /** What was asked for and not obtained (not root, no prlimit), or null. */
  shortfall: string | null;
}

function readLimit(pid: number): { soft: number; hard: number } {
  const out = execFileSync("prlimit", ["--pid", String(pid), "--nofile", "--raw", "--noheadings", "--output", "SOFT,HARD"], { encoding: "utf8" });
  const [soft, hard] = out
    .trim()
    .split(/\s+/)
    .map((word) => (word === "unlimited" ? Number.POSITIVE_INFINITY : Number(word)));
  return { soft: soft ?? 0, hard: hard ?? 0 };
}

/** Raises (never lowers) a process's RLIMIT_NOFILE to at least `wanted`, as far as it is allowed. */
export function raiseFileLimit(pid: number, wanted: number): FileLimit {
  let current: { soft: number; hard: number };
  try {
    current = readLimit(pid);
  } catch (error) {
    return { pid, soft: Number.NaN, hard: Number.NaN, shortfall: `prlimit unavailable: ${(error as Error).message.split("\n")[0]}` };
  }
  if (current.soft >= wanted) return { pid, ...current, shortfall: null };
  const hard = Math.max(current.hard, wanted);
  try {
    execFileSync("prlimit", ["--pid", String(pid), `--nofile=${wanted}:${hard}`], { stdio: "pipe" });
  } catch {
    // Not allowed to raise the hard limit: the soft one as far as the hard one goes.
    try {
      execFileSync("prlimit", ["--pid", String(pid), `--nofile=${Math.min(wanted, current.hard)}:${current.hard}`], { stdio: "pipe" });
    } catch {
      // Left as it was; reported below.
    }
  }
  const after = readLimit(pid);
  return { pid, ...after, shortfall: after.soft >= wanted ? null : `wanted ${wanted}, got ${after.soft} (hard ${after.hard})` };
}
