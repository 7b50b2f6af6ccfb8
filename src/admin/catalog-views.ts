// JSON of the live catalog (docs/operations.md, "The live catalog"), shared by the admin API
// (/admin/v1/catalog) and the dashboard's Catalog page (/dashboard/api/admin/catalog): the catalog
// with its source and version, a version's record, and a provider's shared key by its last four
// characters only.
import type { CatalogDocument } from "../config/catalog-document.js";
import type { CatalogKeyInfo } from "../config/file-keys.js";
import type { LiveCatalog } from "../config/live-catalog.js";
import type { CatalogVersion, ProviderKeyInfo } from "../store/catalog-store.js";

export function catalogView(source: "file" | "database", version: CatalogVersion | null, document: CatalogDocument) {
  return { object: "catalog" as const, source, read_only: source === "file", ...(version ? catalogVersionView(version) : { version: null }), document };
}

export function catalogVersionView(version: Omit<CatalogVersion, "document">) {
  return { version: version.version, created_at: new Date(version.createdAt).toISOString(), actor: version.actor, reason: version.reason };
}

/** A shared key: stored in the database (pk_…, added through the console) or written in the config file (fk_…). */
export function catalogProviderKeyView(info: ProviderKeyInfo | CatalogKeyInfo) {
  return {
    id: info.id,
    provider: info.provider,
    label: info.label,
    last4: info.last4,
    status: info.status,
    source: "source" in info ? info.source : ("database" as const),
    created_at: info.createdAt === null ? null : new Date(info.createdAt).toISOString(),
  };
}

/** The catalog served now with its provider keys (from the file: the file's keys, with their states). */
export async function currentCatalogView(catalog: LiveCatalog) {
  const { version, document } = await catalog.current();
  const keys = await catalog.providerKeys();
  return { ...catalogView(catalog.source, version, document), provider_keys: keys.map(catalogProviderKeyView) };
}

/** Version `from` against version `to` (the catalog served now when absent). */
export async function catalogDiffView(catalog: LiveCatalog, fromVersion: number, toVersion?: number) {
  const from = await catalog.version(fromVersion);
  const to = toVersion === undefined ? await catalog.current() : await catalog.version(toVersion);
  return { object: "catalog.diff" as const, from: fromVersion, to: to.version?.version ?? null, changes: catalog.diff(from.document, to.document) };
}
