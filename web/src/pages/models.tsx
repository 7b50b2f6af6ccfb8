// Models: every model the account's tier includes, or only those one key may use, with kind,
// context window, output limit, modalities and every price the catalog has (one per billing
// dimension, as GET /dashboard/api/models lists them), searchable by id, kind and modality.
import { useState } from "react";
import { api, type Key } from "../api";
import { ErrorText, Link, Money, useLoad } from "../components";

export interface PriceView {
  dimension: string;
  unit: "token" | "unit";
  counts: string;
  variant: string | null;
  usd: string;
}

export interface ModelView {
  id: string;
  kind: "chat" | "image" | "video" | "embedding";
  context_window: number | null;
  max_output_tokens: number | null;
  modalities: { input: string[]; output: string[] };
  demo: boolean;
  routing_group: boolean;
  prices: PriceView[];
  long_context: null | { above_input_tokens: number; prices: PriceView[] };
}

export interface ModelsResponse {
  tier: string;
  /** The tier's price factor, already in every price; null: list prices. */
  price_factor: string | null;
  key: null | { id: string; name: string; prefix: string; allowed_models: string[] | null };
  public_url: string | null;
  data: ModelView[];
}

export function loadModels(keyId: string | null): Promise<ModelsResponse> {
  return api<ModelsResponse>("GET", `/models${keyId ? `?key_id=${encodeURIComponent(keyId)}` : ""}`);
}

const COUNT = new Intl.NumberFormat("en-US");

/** Token counts and limits with thousands separators; null: not configured. */
export function formatCount(value: number | null): string {
  return value === null ? "—" : COUNT.format(value);
}

function plural(count: number, noun: string): string {
  return `${formatCount(count)} ${noun}${count === 1 ? "" : "s"}`;
}

/** "Cached input", "Cache write 5m", "Video second": the dimension's name for people. */
function dimensionLabel(price: PriceView): string {
  const text = price.dimension.replace(/_/g, " ");
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "per 1M tokens", "per call", "per image (1024x1024)". */
function priceUnit(price: PriceView): string {
  if (price.unit === "token") return "per 1M tokens";
  const one = price.counts.replace(/s$/, "");
  return price.variant === null ? `per ${one}` : `per ${one} (${price.variant})`;
}

/** Zero in the catalog's decimal form ("0.00"): the dimension is not charged for this model. */
function isFree(price: PriceView): boolean {
  return /^0\.0+$/.test(price.usd);
}

function matches(model: ModelView, query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const haystack = [model.id, model.kind, ...model.modalities.input, ...model.modalities.output, model.demo ? "demo" : ""].join(" ").toLowerCase();
  return words.every((word) => haystack.includes(word));
}

export function ModelsPage() {
  const [keyId, setKeyId] = useState(() => new URLSearchParams(window.location.search).get("key"));
  const [query, setQuery] = useState("");
  const keys = useLoad(() => api<{ data: Key[] }>("GET", "/keys"), []);
  const models = useLoad(() => loadModels(keyId), [keyId]);
  const usable = (keys.data?.data ?? []).filter((k) => k.status !== "revoked");
  const shown = (models.data?.data ?? []).filter((m) => matches(m, query));

  return (
    <section aria-labelledby="models-title">
      <h1 id="models-title">Models</h1>
      <p className="hint">
        {models.data?.key
          ? `The models key ${models.data.key.name || models.data.key.prefix} may use (its policy within your ${models.data.tier} tier).`
          : models.data && `Every model of your ${models.data.tier} tier. Pick a key to see only the models its policy allows.`}{" "}
        Prices are in USD, per million tokens or per unit
        {models.data?.price_factor ? `, as your tier pays them (${models.data.price_factor} × the list price)` : ""}.
      </p>
      <div className="filters" role="search" aria-label="Filter models">
        <label>
          Search models
          <input type="search" value={query} maxLength={200} onChange={(e) => setQuery(e.target.value)} placeholder="id, kind or modality" />
        </label>
        <label>
          Models for
          <select
            value={keyId ?? ""}
            onChange={(e) => {
              const next = e.target.value || null;
              setKeyId(next);
              window.history.replaceState(null, "", `/dashboard/models${next ? `?key=${encodeURIComponent(next)}` : ""}`);
            }}
          >
            <option value="">My tier (every key without a model list)</option>
            {usable.map((k) => (
              <option key={k.id} value={k.id}>
                Key {k.name || k.prefix}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorText error={models.error ?? keys.error} />
      {models.data && (
        <p role="status" className="hint" data-testid="model-count">
          {shown.length === models.data.data.length ? plural(shown.length, "model") : `${shown.length} of ${plural(models.data.data.length, "model")}`}
        </p>
      )}
      <ul className="model-list" aria-label="Models">
        {shown.map((model) => (
          <ModelCard key={model.id} model={model} />
        ))}
      </ul>
      {models.data?.key && (
        <p>
          <Link to={`/keys/${encodeURIComponent(models.data.key.id)}/start`}>Getting started with key {models.data.key.name || models.data.key.prefix}</Link>
        </p>
      )}
    </section>
  );
}

function ModelCard(props: { model: ModelView }) {
  const { model } = props;
  const titleId = `model-${model.id.replace(/[^A-Za-z0-9_-]/g, "_")}`;
  const charged = model.prices.filter((p) => !isFree(p));
  const free = model.prices.filter(isFree);
  return (
    <li>
      <article aria-labelledby={titleId} data-model-id={model.id}>
        <h2 id={titleId}>
          <code>{model.id}</code> <span className="badge">{model.kind}</span>
          {model.demo && <span className="badge">demo: made-up answers</span>}
          {model.routing_group && <span className="badge">routing group</span>}
        </h2>
        <dl className="facts">
          <div>
            <dt>Context window</dt>
            <dd>{model.context_window === null ? "—" : `${formatCount(model.context_window)} tokens`}</dd>
          </div>
          <div>
            <dt>Max output</dt>
            <dd>{model.max_output_tokens === null ? "—" : `${formatCount(model.max_output_tokens)} tokens`}</dd>
          </div>
          <div>
            <dt>Input</dt>
            <dd>{model.modalities.input.join(", ") || "—"}</dd>
          </div>
          <div>
            <dt>Output</dt>
            <dd>{model.modalities.output.join(", ") || "—"}</dd>
          </div>
        </dl>
        <PriceTable caption={`Prices of ${model.id}`} prices={charged} />
        {free.length > 0 && (
          <p className="hint">
            Not charged:{" "}
            {free
              .map(dimensionLabel)
              .filter((label, i, all) => all.indexOf(label) === i)
              .join(", ")
              .toLowerCase()}
            .
          </p>
        )}
        {model.long_context && (
          <PriceTable caption={`Above ${formatCount(model.long_context.above_input_tokens)} input tokens`} prices={model.long_context.prices.filter((p) => !isFree(p))} />
        )}
      </article>
    </li>
  );
}

function PriceTable(props: { caption: string; prices: PriceView[] }) {
  if (props.prices.length === 0) return <p className="hint">{props.caption}: free.</p>;
  return (
    <table className="prices">
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">Dimension</th>
          <th scope="col">Price</th>
        </tr>
      </thead>
      <tbody>
        {props.prices.map((price) => (
          <tr key={`${price.dimension}:${price.variant ?? ""}`}>
            <th scope="row">{dimensionLabel(price)}</th>
            <td>
              <Money usd={price.usd} /> {priceUnit(price)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
