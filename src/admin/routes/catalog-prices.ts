// POST /admin/v1/catalog/price-import: a bulk price import from a CSV or JSON file (docs/operations.md,
// "Bulk price import"; src/config/price-import.ts). With dry_run: true it answers the preview (every
// change old -> new, every problem) and changes nothing; without, it applies the file as ONE new
// catalog version (audited as catalog.price_import), or refuses it whole (400, every problem) when
// any row has one. With catalog.source: file it is 409 catalog_read_only.
import { z } from "zod";
import { PRICE_IMPORT_LIMITS, type PriceChange, type PriceImportIssue } from "../../config/price-import.js";
import type { CatalogVersion } from "../../store/catalog-store.js";
import { adminActor } from "../auth.js";
import { catalogVersionView } from "../catalog-views.js";
import { parseWith } from "../validate.js";
import type { AdminRoute } from "./route.js";

export const priceImportBody = z
  .object({
    format: z.enum(["csv", "json"]),
    /** The file's text. */
    content: z.string().min(1).max(PRICE_IMPORT_LIMITS.maxChars),
    /** The catalog version the file is applied to; a later one written meanwhile refuses the apply (409). */
    base_version: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER),
    /** true: the preview only, nothing changed. */
    dry_run: z.boolean().default(false),
  })
  .strict();

/** The answer of a price import, previewed or applied. */
export function priceImportView(baseVersion: number, dryRun: boolean, result: { changes: PriceChange[]; issues: PriceImportIssue[]; version: CatalogVersion | null }) {
  return {
    object: "catalog.price_import" as const,
    dry_run: dryRun,
    base_version: baseVersion,
    changes: result.changes,
    errors: result.issues,
    version: result.version === null ? null : catalogVersionView(result.version),
  };
}

export const catalogPriceRoutes: AdminRoute[] = [
  {
    method: "POST",
    url: "/catalog/price-import",
    scope: "catalog:write",
    fileTextFields: ["content"],
    async handler(request, reply, ctx) {
      const body = parseWith(priceImportBody, request.body);
      const result = await ctx.catalog.importPrices(adminActor(request), { format: body.format, content: body.content, baseVersion: body.base_version, apply: !body.dry_run });
      if (!body.dry_run) reply.code(201);
      return priceImportView(body.base_version, body.dry_run, result);
    },
  },
];
