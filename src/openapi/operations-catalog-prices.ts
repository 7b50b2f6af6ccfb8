// The bulk price import's operations (docs/operations.md, "Bulk price import"): the admin API's and
// the Models page's, one request schema (src/admin/routes/catalog-prices.ts).
import { z } from "zod";
import { priceImportBody } from "../admin/routes/catalog-prices.js";
import { admin, dash, type OperationSpec, type ResponseSpec } from "./operation-spec.js";
import * as r from "./response-schemas.js";

const priceImportSchema = z.object({
  object: z.literal("catalog.price_import"),
  dry_run: z.boolean(),
  base_version: z.number().int(),
  /** Every price that changes, as the document writes it before (null: not set) and after. */
  changes: z.array(z.object({ model: z.string(), price: z.string(), before: z.string().nullable(), after: z.string() })),
  /** Every problem of the file (row 1 is a CSV's header; a JSON array's rows count from 1; row 0 is the whole file). */
  errors: z.array(z.object({ row: z.number().int(), model: z.string().nullable(), field: z.string(), message: z.string() })),
  /** The version written (null for a dry run). */
  version: r.catalogVersionSchema.nullable(),
});

const responses: Record<number, ResponseSpec> = {
  200: { description: "dry_run: true: the preview, nothing changed", json: priceImportSchema },
  201: { description: "Applied as one new catalog version", json: priceImportSchema },
};

export const ADMIN_CATALOG_PRICE_OPERATIONS: readonly OperationSpec[] = [
  admin({
    method: "POST",
    path: "/catalog/price-import",
    summary: "Import model prices from a CSV or JSON file: a preview with dry_run, else one new catalog version (400 with every problem, nothing changed; 409 when read-only)",
    body: priceImportBody,
    responses,
  }),
];

export const DASHBOARD_CATALOG_PRICE_OPERATIONS: readonly OperationSpec[] = [
  dash({
    method: "POST",
    path: "/admin/catalog/price-import",
    summary: "Import model prices from a CSV or JSON file, previewed with dry_run (administrators; 409 when read-only)",
    body: priceImportBody,
    responses,
  }),
];
