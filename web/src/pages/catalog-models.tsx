// Administrators: the catalog's models (docs/dashboard.md, "Catalog models"): every model of the live
// catalog in one table, searched by id or upstream name, filtered by provider, kind, tier and a price
// range, sorted by id, provider, kind or a price; and the bulk price import (catalog-price-import.tsx).
// Prices are compared exactly (nano-USD as bigint, never a float). With catalog.source: file the page
// only reads and says so.
import { useMemo, useState } from "react";
import { api, type CatalogDocument, type LiveCatalog } from "../api";
import { ErrorText, Link, TableScroll, useLoad } from "../components";
import { PriceImport } from "./catalog-price-import";

type Model = CatalogDocument["models"][number];
type SortKey = "id" | "provider" | "kind" | "price";

/** The price keys offered for the price column, filter and sort (the config file's keys). */
const PRICE_KEYS = [
  "input_per_mtok",
  "cached_input_per_mtok",
  "cache_write_5m_per_mtok",
  "cache_write_1h_per_mtok",
  "output_per_mtok",
  "web_search_per_call",
  "per_request",
  "per_video_second",
];

const DECIMAL = /^(\d{1,12})(?:\.(\d{1,9}))?$/;

/** A USD decimal as exact nano-USD; null when it is not one (or not given). */
export function nanoOf(value: unknown): bigint | null {
  const text = typeof value === "number" ? String(value) : typeof value === "string" ? value.trim() : "";
  const match = DECIMAL.exec(text);
  return match ? BigInt(match[1]!) * 1_000_000_000n + BigInt((match[2] ?? "").padEnd(9, "0")) : null;
}

const str = (value: unknown): string => (typeof value === "string" ? value : "");

/** The providers that serve a model: its own, or its routing group's deployments'. */
function providersOf(model: Model): string[] {
  if (typeof model.provider === "string") return [model.provider];
  return Array.isArray(model.deployments) ? [...new Set((model.deployments as Array<Record<string, unknown>>).map((d) => str(d.provider)))] : [];
}

function tiersOf(document: CatalogDocument, id: string): string[] {
  return Object.entries(document.tiers)
    .filter(([, tier]) => Array.isArray(tier.models) && (tier.models.includes(id) || tier.models.includes("*")))
    .map(([name]) => name);
}

function priceOf(model: Model, key: string): unknown {
  return typeof model.pricing === "object" && model.pricing !== null ? (model.pricing as Record<string, unknown>)[key] : undefined;
}

interface Row {
  id: string;
  kind: string;
  providers: string[];
  upstream: string;
  tiers: string[];
  model: Model;
}

export function CatalogModelsPage() {
  const catalog = useLoad(() => api<LiveCatalog>("GET", "/admin/catalog"), []);
  const [search, setSearch] = useState("");
  const [provider, setProvider] = useState("");
  const [kind, setKind] = useState("");
  const [tier, setTier] = useState("");
  const [priceKey, setPriceKey] = useState("input_per_mtok");
  const [minPrice, setMinPrice] = useState("");
  const [maxPrice, setMaxPrice] = useState("");
  const [sort, setSort] = useState<{ key: SortKey; descending: boolean }>({ key: "id", descending: false });
  const data = catalog.data;

  const rows = useMemo<Row[]>(
    () =>
      (data?.document.models ?? []).map((model) => ({
        id: str(model.id),
        kind: str(model.kind),
        providers: providersOf(model),
        upstream: str(model.upstream_model),
        tiers: data === null ? [] : tiersOf(data.document, str(model.id)),
        model,
      })),
    [data],
  );
  const min = nanoOf(minPrice);
  const max = nanoOf(maxPrice);
  const rangeError = (minPrice.trim() !== "" && min === null) || (maxPrice.trim() !== "" && max === null) ? "A price bound is a USD amount such as 2.50." : null;
  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase();
    const matching = rows.filter((row) => {
      if (needle !== "" && !row.id.toLowerCase().includes(needle) && !row.upstream.toLowerCase().includes(needle)) return false;
      if (provider !== "" && !row.providers.includes(provider)) return false;
      if (kind !== "" && row.kind !== kind) return false;
      if (tier !== "" && !row.tiers.includes(tier)) return false;
      if (min !== null || max !== null) {
        const price = nanoOf(priceOf(row.model, priceKey));
        if (price === null || (min !== null && price < min) || (max !== null && price > max)) return false;
      }
      return true;
    });
    return matching.sort((a, b) => compareRows(a, b, sort.key, sort.descending, priceKey));
  }, [rows, search, provider, kind, tier, min, max, priceKey, sort]);

  const providers = [...new Set(rows.flatMap((r) => r.providers))].sort();
  const kinds = [...new Set(rows.map((r) => r.kind))].sort();
  const tiers = data ? Object.keys(data.document.tiers).sort() : [];

  function sortBy(key: SortKey) {
    setSort((s) => ({ key, descending: s.key === key ? !s.descending : false }));
  }
  const ariaSort = (key: SortKey) => (sort.key === key ? (sort.descending ? "descending" : "ascending") : undefined);
  const header = (key: SortKey, label: string) => (
    <th scope="col" aria-sort={ariaSort(key)}>
      <button type="button" className="link" onClick={() => sortBy(key)} data-testid={`sort-${key}`}>
        {label}
        {sort.key === key ? (sort.descending ? " ↓" : " ↑") : ""}
      </button>
    </th>
  );

  return (
    <section aria-labelledby="catalog-models-page-title">
      <h1 id="catalog-models-page-title">Catalog models</h1>
      <p className="hint">
        <Link to="/admin/catalog">Back to the catalog</Link>
      </p>
      <ErrorText error={catalog.error} />
      {data?.read_only && (
        <p className="hint" role="note" data-testid="models-read-only">
          Read-only: catalog.source is file, so gateway.config.yaml is the source of truth. Change prices there and reload.
        </p>
      )}
      <form className="filters" aria-label="Filter models" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="model id or upstream name" data-testid="models-search" />
        </label>
        <label>
          Provider
          <select value={provider} onChange={(e) => setProvider(e.target.value)} data-testid="models-provider">
            <option value="">any</option>
            {providers.map((p) => (
              <option key={p}>{p}</option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select value={kind} onChange={(e) => setKind(e.target.value)} data-testid="models-kind">
            <option value="">any</option>
            {kinds.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <label>
          Tier
          <select value={tier} onChange={(e) => setTier(e.target.value)} data-testid="models-tier">
            <option value="">any</option>
            {tiers.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Price
          <select value={priceKey} onChange={(e) => setPriceKey(e.target.value)} data-testid="models-price-key">
            {PRICE_KEYS.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        <label>
          From (USD)
          <input inputMode="decimal" value={minPrice} onChange={(e) => setMinPrice(e.target.value)} size={8} data-testid="models-price-min" />
        </label>
        <label>
          To (USD)
          <input inputMode="decimal" value={maxPrice} onChange={(e) => setMaxPrice(e.target.value)} size={8} data-testid="models-price-max" />
        </label>
      </form>
      {rangeError && (
        <p className="error" role="alert">
          {rangeError}
        </p>
      )}
      <TableScroll label="Catalog models table">
        <table data-testid="models-table">
          <caption>
            {shown.length} of {rows.length} models; prices in USD as the config file writes them (— : not set)
          </caption>
          <thead>
            <tr>
              {header("id", "Model")}
              {header("provider", "Provider")}
              {header("kind", "Kind")}
              <th scope="col">Tiers</th>
              {header("price", priceKey)}
              <th scope="col">Other prices</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((row) => (
              <tr key={row.id} data-testid="models-row">
                <th scope="row">
                  <code>{row.id}</code>
                  {row.upstream !== "" && row.upstream !== row.id && <div className="hint">{row.upstream}</div>}
                </th>
                <td>{row.providers.join(", ") || "—"}</td>
                <td>{row.kind}</td>
                <td>{row.tiers.join(", ") || "—"}</td>
                <td data-testid="models-price">{priceText(priceOf(row.model, priceKey))}</td>
                <td>
                  {otherPrices(row.model, priceKey).map(([key, value]) => (
                    <div key={key}>
                      {key}: {value}
                    </div>
                  ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      {data && !data.read_only && data.version !== null && <PriceImport baseVersion={data.version} onApplied={catalog.reload} />}
    </section>
  );
}

function priceText(value: unknown): string {
  return typeof value === "string" || typeof value === "number" ? String(value) : "—";
}

/** The model's other prices as the document writes them (per_image as SIZE entries, long_context as JSON). */
function otherPrices(model: Model, shownKey: string): Array<[string, string]> {
  const pricing = typeof model.pricing === "object" && model.pricing !== null ? (model.pricing as Record<string, unknown>) : {};
  return Object.entries(pricing)
    .filter(([key]) => key !== shownKey)
    .flatMap(([key, value]): Array<[string, string]> => {
      if (key === "per_image" && typeof value === "object" && value !== null) return Object.entries(value).map(([variant, price]) => [`per_image.${variant}`, priceText(price)]);
      return [[key, typeof value === "object" ? JSON.stringify(value) : priceText(value)]];
    });
}

/** Ties by id; by price, a model without this price comes after every priced one in either direction. */
function compareRows(a: Row, b: Row, key: SortKey, descending: boolean, priceKey: string): number {
  const sign = descending ? -1 : 1;
  const byId = a.id.localeCompare(b.id);
  if (key === "id") return sign * byId;
  if (key === "provider") return sign * ((a.providers.join(",") || "\uffff").localeCompare(b.providers.join(",") || "\uffff") || byId);
  if (key === "kind") return sign * (a.kind.localeCompare(b.kind) || byId);
  const pa = nanoOf(priceOf(a.model, priceKey));
  const pb = nanoOf(priceOf(b.model, priceKey));
  if (pa === null || pb === null) return pa === pb ? byId : pa === null ? 1 : -1;
  return sign * (pa < pb ? -1 : pa > pb ? 1 : byId);
}
