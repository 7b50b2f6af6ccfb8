// "Did you mean …?" for a name the client mistyped: the closest of the names it may use, by edit
// distance, when the distance is small enough to be a typo rather than another name.

/** Levenshtein distance, case-insensitive; stops early once it is past `limit`. */
export function editDistance(a: string, b: string, limit = Infinity): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (Math.abs(x.length - y.length) > limit) return limit + 1;
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      best = Math.min(best, current[j]!);
    }
    if (best > limit) return limit + 1;
    previous = current;
  }
  return previous[y.length]!;
}

/** The candidate nearest to `name` within a third of its length (at least 2 edits), or null. */
export function nearestName(name: string, candidates: Iterable<string>): string | null {
  const limit = Math.max(2, Math.floor(name.length / 3));
  let best: { name: string; distance: number } | null = null;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate, limit);
    if (distance <= limit && (best === null || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name ?? null;
}
