// Bulk price import (docs/operations.md, "Bulk price import"): a file of model ids and prices, in the
// config file's units (USD decimal strings: per million tokens for the *_per_mtok keys, per call,
// request or second for the others, per image for per_image.VARIANT), applied to a catalog document
// as a list of changes, every problem found at once. Two formats:
//   CSV: a header row `model,<price key>,...`, one row per model; an empty cell leaves that price as
//     it is. Parsed by src/core/csv-parse.ts (quoted fields, bounded).
//   JSON: an array of objects `{"model": "...", "<price key>": "2.50", ...}`; a price as a string or
//     a plain JSON number (read as the shortest decimal that writes it, as the config file is).
// A price key is one of the dimensions' keys (src/core/dimensions.ts) or `per_image.SIZE[/QUALITY]`.
// Only a model's own `pricing` changes (a routing group's deployments keep theirs); a price is set,
// never removed. The whole import is refused when any row has a problem (the caller applies nothing).
import { CsvError, parseCsv } from "../core/csv-parse.js";
import { DIMENSIONS } from "../core/dimensions.js";
import { parseUsd } from "../core/money.js";
import type { CatalogDocument } from "./catalog-document.js";

export type PriceFileFormat = "csv" | "json";

/** Bounds on an upload: a catalog holds at most 10,000 models (catalog-document.ts). */
export const PRICE_IMPORT_LIMITS = { maxChars: 2_000_000, maxRows: 10_000, maxColumns: 64, maxFieldChars: 200 } as const;

/** The price keys a row may set besides per_image.VARIANT, in the dimensions' order. */
export const PRICE_IMPORT_KEYS: readonly string[] = DIMENSIONS.flatMap((d) => (d.priceKey === null ? [] : [d.priceKey]));

const PER_IMAGE = "per_image.";
const IMAGE_VARIANT = /^[A-Za-z0-9._-]{1,32}(?:\/[A-Za-z0-9._-]{1,32})?$/;

/** One problem, where it is: the row (1-based, the CSV header being row 1; the JSON array's index + 1) and the column. */
export interface PriceImportIssue {
  row: number;
  model: string | null;
  field: string;
  message: string;
}

/** One price that changes: as the document writes it before (null: not set, its default applied) and after. */
export interface PriceChange {
  model: string;
  price: string;
  before: string | null;
  after: string;
}

interface PriceRow {
  row: number;
  model: string;
  prices: Array<{ key: string; value: string }>;
}

/** The rows of a file, or the problems that make it unreadable (every one found). */
export function parsePriceFile(format: PriceFileFormat, content: string): { rows: PriceRow[]; issues: PriceImportIssue[] } {
  return format === "csv" ? parseCsvRows(content) : parseJsonRows(content);
}

/**
 * The document with the file's prices applied, and every change and every problem: an unknown model,
 * a model named twice, an unknown price key, a value that is not a non-negative USD amount with at
 * most 9 decimals. Unchanged prices are not listed.
 */
export function planPriceImport(
  document: CatalogDocument,
  format: PriceFileFormat,
  content: string,
): { document: CatalogDocument; changes: PriceChange[]; issues: PriceImportIssue[] } {
  const { rows, issues } = parsePriceFile(format, content);
  const byId = new Map(document.models.map((model, index) => [model.id, index]));
  const seen = new Map<string, number>();
  const models = [...document.models];
  const changes: PriceChange[] = [];
  for (const row of rows) {
    const index = byId.get(row.model);
    const first = seen.get(row.model);
    if (first !== undefined) issues.push({ row: row.row, model: row.model, field: "model", message: `the model is already priced on row ${first}` });
    else seen.set(row.model, row.row);
    if (index === undefined) {
      issues.push({ row: row.row, model: row.model, field: "model", message: "no model with this id in the catalog" });
      continue;
    }
    for (const { key, value } of row.prices) {
      const problem = keyProblem(key) ?? valueProblem(value);
      if (problem !== null) {
        issues.push({ row: row.row, model: row.model, field: key, message: problem });
        continue;
      }
      const model = models[index]!;
      const before = priceText(model.pricing, key);
      if (before !== null && parseUsd(before) === parseUsd(value)) continue;
      changes.push({ model: row.model, price: key, before, after: value });
      models[index] = { ...model, pricing: withPrice(model.pricing, key, value) };
    }
  }
  issues.sort((a, b) => a.row - b.row);
  return { document: { ...document, models }, changes, issues };
}

type Pricing = CatalogDocument["models"][number]["pricing"];

function priceText(pricing: Pricing, key: string): string | null {
  const value = key.startsWith(PER_IMAGE) ? pricing.per_image?.[key.slice(PER_IMAGE.length)] : (pricing as Record<string, unknown>)[key];
  return typeof value === "string" || typeof value === "number" ? String(value) : null;
}

function withPrice(pricing: Pricing, key: string, value: string): Pricing {
  if (!key.startsWith(PER_IMAGE)) return { ...pricing, [key]: value };
  return { ...pricing, per_image: { ...pricing.per_image, [key.slice(PER_IMAGE.length)]: value } };
}

function keyProblem(key: string): string | null {
  if (PRICE_IMPORT_KEYS.includes(key)) return null;
  if (key.startsWith(PER_IMAGE) && IMAGE_VARIANT.test(key.slice(PER_IMAGE.length))) return null;
  return `not a price key: use one of ${PRICE_IMPORT_KEYS.join(", ")} or per_image.SIZE[/QUALITY]`;
}

function valueProblem(value: string): string | null {
  const nano = parseUsd(value);
  return nano === null || nano < 0n ? `"${value.slice(0, 40)}" is not a non-negative USD amount with at most 9 decimals` : null;
}

function parseCsvRows(content: string): { rows: PriceRow[]; issues: PriceImportIssue[] } {
  let records;
  try {
    records = parseCsv(content, {
      maxChars: PRICE_IMPORT_LIMITS.maxChars,
      maxRecords: PRICE_IMPORT_LIMITS.maxRows + 1,
      maxFields: PRICE_IMPORT_LIMITS.maxColumns,
      maxFieldChars: PRICE_IMPORT_LIMITS.maxFieldChars,
    });
  } catch (error) {
    if (error instanceof CsvError) return { rows: [], issues: [{ row: error.line, model: null, field: "file", message: error.message }] };
    throw error;
  }
  const [header, ...body] = records;
  if (header === undefined) return { rows: [], issues: [{ row: 1, model: null, field: "file", message: "the file is empty: write a header row model,<price key>,..." }] };
  const columns = header.fields.map((name) => name.trim());
  const issues: PriceImportIssue[] = [];
  if (columns[0] !== "model") issues.push({ row: 1, model: null, field: "model", message: 'the first column of the header must be "model"' });
  columns.slice(1).forEach((name, i) => {
    const problem = keyProblem(name);
    if (problem !== null) issues.push({ row: 1, model: null, field: name || `column ${i + 2}`, message: problem });
    else if (columns.indexOf(name) !== i + 1) issues.push({ row: 1, model: null, field: name, message: "the column is named twice" });
  });
  if (issues.length > 0) return { rows: [], issues };
  const rows: PriceRow[] = [];
  body.forEach((record, i) => {
    const row = i + 2;
    const model = record.fields[0]?.trim() ?? "";
    if (record.fields.length !== columns.length) {
      issues.push({ row, model: model || null, field: "file", message: `the row has ${record.fields.length} fields, the header ${columns.length} (line ${record.line})` });
      return;
    }
    if (model === "") {
      issues.push({ row, model: null, field: "model", message: "required" });
      return;
    }
    const prices = columns.slice(1).flatMap((key, c) => {
      const value = record.fields[c + 1]!.trim();
      return value === "" ? [] : [{ key, value }];
    });
    rows.push({ row, model, prices });
  });
  return { rows, issues };
}

function parseJsonRows(content: string): { rows: PriceRow[]; issues: PriceImportIssue[] } {
  const fileIssue = (message: string) => ({ rows: [], issues: [{ row: 0, model: null, field: "file", message }] });
  if (content.length > PRICE_IMPORT_LIMITS.maxChars) return fileIssue(`the file is larger than ${PRICE_IMPORT_LIMITS.maxChars} characters`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch (error) {
    return fileIssue(`not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) return fileIssue('not an array of rows: write [{"model": "...", "input_per_mtok": "2.50"}, ...]');
  if (parsed.length > PRICE_IMPORT_LIMITS.maxRows) return fileIssue(`more than ${PRICE_IMPORT_LIMITS.maxRows} rows`);
  const rows: PriceRow[] = [];
  const issues: PriceImportIssue[] = [];
  parsed.forEach((entry: unknown, i) => {
    const row = i + 1;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
      issues.push({ row, model: null, field: "row", message: "not an object" });
      return;
    }
    const fields = entry as Record<string, unknown>;
    const model = typeof fields.model === "string" ? fields.model.trim() : "";
    if (model === "" || model.length > PRICE_IMPORT_LIMITS.maxFieldChars) {
      issues.push({ row, model: null, field: "model", message: "required: the model's id as a string" });
      return;
    }
    const prices: PriceRow["prices"] = [];
    for (const [key, value] of Object.entries(fields)) {
      if (key === "model") continue;
      if (typeof value === "string") prices.push({ key, value: value.trim() });
      else if (typeof value === "number") prices.push({ key, value: Number.isFinite(value) ? String(value) : "?" });
      else issues.push({ row, model, field: key, message: "a price is a decimal string or a number" });
    }
    if (prices.length > PRICE_IMPORT_LIMITS.maxColumns) issues.push({ row, model, field: "row", message: `more than ${PRICE_IMPORT_LIMITS.maxColumns} prices` });
    else rows.push({ row, model, prices });
  });
  return { rows, issues };
}
