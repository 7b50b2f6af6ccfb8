// No import cycle in src/, type-only imports included: a route module depending on app.ts (which
// imports every route) made the composition root and its routes one knot. Relative specifiers
// only; external packages cannot close a cycle through src/.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), "../../src");
const SPECIFIER = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"|\bimport\(\s*"(\.[^"]+)"\s*\)/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(SPECIFIER)].map((m) => resolve(dirname(file), (m[1] ?? m[2])!.replace(/\.js$/, ".ts")));
}

/** Every cycle's path (file -> ... -> file), found by depth-first search. */
function findCycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string) => {
    state.set(file, "open");
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === "open") cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, "done");
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return cycles;
}

describe("src/ imports", () => {
  it("form no cycle, counting type-only imports", () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(100);
    const graph = new Map(files.map((f) => [f, importsOf(f)]));
    expect(findCycles(graph).map((cycle) => cycle.map((f) => relative(SRC, f)).join(" -> "))).toEqual([]);
  });

  it("the check reads type-only imports and finds a cycle where there is one", () => {
    expect(importsOf(join(SRC, "http/server.ts"))).toContain(join(SRC, "http/route-context.ts")); // import type
    const graph = new Map([["a", ["b"]], ["b", ["c"]], ["c", ["b", "d"]], ["d", []]]);
    expect(findCycles(graph)).toEqual([["b", "c", "b"]]);
  });
});
