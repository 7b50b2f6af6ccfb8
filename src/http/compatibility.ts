// The compatibility matrix's summary for GET /v1/catalog. The matrix is written to
// docs/compatibility.json by test/agents/compatibility-matrix.test.ts and committed; the gateway
// reads it once at startup (src/ and dist/ sit at the same depth, so one relative path serves both).
// A missing or malformed file leaves the field null instead of failing the catalog.
import { readFileSync } from "node:fs";
import { z } from "zod";

const MATRIX_URL = new URL("../../docs/compatibility.json", import.meta.url);
const MAX_BYTES = 1_000_000;

const status = z.enum(["pass", "fail", "n/a"]);
const clientsSchema = z.array(z.object({ id: z.string().max(100), name: z.string().max(200), packages: z.record(z.string().max(200), z.string().max(100)) })).max(50);
const columnsSchema = z.array(z.object({ id: z.string().max(100), name: z.string().max(200) })).max(50);
const resultsSchema = z.record(z.string().max(100), z.record(z.string().max(100), z.record(z.string().max(100), z.object({ status, reason: z.string().max(1000).optional() }))));
const matrixSchema = z.object({
  generated: z.string().max(40),
  clients: clientsSchema,
  upstream_types: columnsSchema,
  features: columnsSchema,
  results: resultsSchema,
  // The MCP gateway's part: MCP clients × kinds of MCP server × MCP features.
  mcp: z.object({ clients: clientsSchema, server_kinds: columnsSchema, features: columnsSchema, results: resultsSchema }).optional(),
});

export type CompatibilityStatus = z.infer<typeof status>;

export interface CompatibilitySummary {
  generated: string;
  document: string;
  clients: Array<{ id: string; name: string; packages: Record<string, string> }>;
  upstream_types: string[];
  features: string[];
  /** client id → upstream type → feature → outcome of the last committed run */
  results: Record<string, Record<string, Record<string, CompatibilityStatus>>>;
  totals: Record<CompatibilityStatus, number>;
  /** The MCP gateway's part; null in a matrix without it. */
  mcp: {
    clients: Array<{ id: string; name: string; packages: Record<string, string> }>;
    server_kinds: string[];
    features: string[];
    /** client id → MCP server kind → feature → outcome */
    results: Record<string, Record<string, Record<string, CompatibilityStatus>>>;
    totals: Record<CompatibilityStatus, number>;
  } | null;
}

type Results = z.infer<typeof resultsSchema>;

/** The statuses of a results table, and how many cells have each. */
function statusesOf(cells: Results): { results: CompatibilitySummary["results"]; totals: Record<CompatibilityStatus, number> } {
  const totals: Record<CompatibilityStatus, number> = { pass: 0, fail: 0, "n/a": 0 };
  const results: CompatibilitySummary["results"] = {};
  for (const [client, columns] of Object.entries(cells)) {
    results[client] = {};
    for (const [column, features] of Object.entries(columns)) {
      results[client][column] = {};
      for (const [feature, cell] of Object.entries(features)) {
        results[client][column][feature] = cell.status;
        totals[cell.status] += 1;
      }
    }
  }
  return { results, totals };
}

/** The summary of a matrix document; null when it is not one. */
export function compatibilitySummary(text: string): CompatibilitySummary | null {
  if (text.length > MAX_BYTES) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  const matrix = matrixSchema.safeParse(parsed);
  if (!matrix.success) return null;
  const { results, totals } = statusesOf(matrix.data.results);
  const mcp = matrix.data.mcp;
  return {
    generated: matrix.data.generated,
    document: "docs/compatibility.md",
    clients: matrix.data.clients,
    upstream_types: matrix.data.upstream_types.map((t) => t.id),
    features: matrix.data.features.map((f) => f.id),
    results,
    totals,
    mcp: mcp === undefined ? null : { clients: mcp.clients, server_kinds: mcp.server_kinds.map((k) => k.id), features: mcp.features.map((f) => f.id), ...statusesOf(mcp.results) },
  };
}

/** Reads the committed matrix; null when the file is absent (an install without docs/) or unreadable. */
export function loadCompatibilitySummary(url: URL = MATRIX_URL): CompatibilitySummary | null {
  try {
    return compatibilitySummary(readFileSync(url, "utf8"));
  } catch {
    return null;
  }
}
