// The soak's process sampler: the gateway's RSS and open file descriptors, its workers included
// (the children of `serve --workers N`), read from /proc every few seconds; and the least-squares
// slope that decides whether they stay flat.
import { readdirSync, readFileSync } from "node:fs";

export interface ProcessSample {
  /** Seconds since the soak's start. */
  t: number;
  rssMiB: number;
  fds: number;
  processes: number;
  /** Requests the client had in flight at the sample (each holds up to two of the gateway's fds). */
  inFlight?: number;
}

function childPids(pid: number): number[] {
  const pids: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return pids;
  }
  for (const task of tasks) {
    try {
      for (const word of readFileSync(`/proc/${pid}/task/${task}/children`, "utf8").split(/\s+/)) if (word) pids.push(Number(word));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return pids;
}

function rssKiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) : 0;
}

/** The process and its descendants: summed RSS and open fds; null when the process is gone. */
export function sampleProcessTree(rootPid: number, t: number): ProcessSample | null {
  const pids = [rootPid];
  for (let i = 0; i < pids.length; i++) pids.push(...childPids(pids[i]!));
  let rss = 0;
  let fds = 0;
  let processes = 0;
  for (const pid of pids) {
    try {
      rss += rssKiB(pid);
      fds += readdirSync(`/proc/${pid}/fd`).length;
      processes += 1;
    } catch {
      if (pid === rootPid) return null;
    }
  }
  return { t, rssMiB: rss / 1024, fds, processes };
}

/** Least-squares slope of y over x (per unit of x); 0 with fewer than two points. */
export function slope(points: Array<{ x: number; y: number }>): number {
  const n = points.length;
  if (n < 2) return 0;
  const meanX = points.reduce((s, p) => s + p.x, 0) / n;
  const meanY = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - meanX) * (p.y - meanY);
    den += (p.x - meanX) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export interface TrendSummary {
  /** Samples after the warm-up that the trend is fitted on. */
  samples: number;
  rssSlopeMiBPer10Min: number;
  rssMinMiB: number;
  rssMaxMiB: number;
  fdSlopePer10Min: number;
  fdMin: number;
  fdMax: number;
  inFlightMax: number;
}

export function summarizeTrend(samples: ProcessSample[], warmUpSeconds: number): TrendSummary {
  const kept = samples.filter((s) => s.t >= warmUpSeconds);
  const rss = kept.map((s) => s.rssMiB);
  const fds = kept.map((s) => s.fds);
  return {
    samples: kept.length,
    rssSlopeMiBPer10Min: slope(kept.map((s) => ({ x: s.t, y: s.rssMiB }))) * 600,
    rssMinMiB: rss.length ? Math.min(...rss) : 0,
    rssMaxMiB: rss.length ? Math.max(...rss) : 0,
    fdSlopePer10Min: slope(kept.map((s) => ({ x: s.t, y: s.fds }))) * 600,
    fdMin: fds.length ? Math.min(...fds) : 0,
    fdMax: fds.length ? Math.max(...fds) : 0,
    inFlightMax: Math.max(0, ...kept.map((s) => s.inFlight ?? 0)),
  };
}
