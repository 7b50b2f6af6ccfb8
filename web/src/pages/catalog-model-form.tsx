// The model form of the Catalog page (docs/dashboard.md, "Catalog"): id, kind, provider, upstream
// name, context window, output limit, modalities, every price dimension (the keys come from the
// server: GET /admin/catalog/entry-options) and the tiers that include the model. Saving writes the
// model (one catalog version), then each tier whose list changed (one version each, made from the
// version the model's write made). Kept in its own file so other pages can open it.
import { useState } from "react";
import { api, type CatalogDocument } from "../api";
import { Dialog } from "../dialog";
import {
  EntryForm,
  Field,
  OtherSettings,
  entryPath,
  optional,
  otherSettingsChange,
  otherSettingsOf,
  useEntryOptions,
  withoutNulls,
  type CatalogChange,
} from "./catalog-entity-forms";

/** The fields this form has controls for; the rest (a routing group's deployments and routing, default output, prompt caching) are "Other settings". */
const MODEL_FIELDS = ["id", "kind", "provider", "upstream_model", "context_window", "max_output_tokens", "modalities", "pricing"] as const;

const str = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : "");

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The tiers that list the model by its id ("*" tiers include it anyway and are not changed here). */
function listingTiers(document: CatalogDocument, id: string): string[] {
  return Object.entries(document.tiers)
    .filter(([, tier]) => Array.isArray(tier.models) && (tier.models as string[]).includes(id))
    .map(([name]) => name);
}

export function ModelDialog(props: { id: string | null; document: CatalogDocument; version: number; onDone: (message: string) => void; onClose: () => void }) {
  const options = useEntryOptions();
  const entry = props.id === null ? {} : (props.document.models.find((m) => m.id === props.id) ?? {});
  const providers = Object.keys(props.document.providers);
  const otherBefore = otherSettingsOf(entry, MODEL_FIELDS);
  const [other, setOther] = useState(Object.keys(otherBefore).length === 0 ? "" : JSON.stringify(otherBefore, null, 2));
  // A routing group names its providers in its deployments: the form's provider is not sent then.
  const grouped = /"deployments"\s*:/.test(other);
  const [id, setId] = useState(props.id ?? "");
  const [kind, setKind] = useState(str(entry.kind) || "chat");
  const [provider, setProvider] = useState(str(entry.provider) || providers[0] || "");
  const [upstream, setUpstream] = useState(str(entry.upstream_model));
  const [contextWindow, setContextWindow] = useState(str(entry.context_window));
  const [maxOutput, setMaxOutput] = useState(str(entry.max_output_tokens));
  const modalities = objectOf(entry.modalities);
  const [input, setInput] = useState<string[]>(Array.isArray(modalities.input) ? (modalities.input as string[]) : []);
  const [output, setOutput] = useState<string[]>(Array.isArray(modalities.output) ? (modalities.output as string[]) : []);
  const pricing = objectOf(entry.pricing);
  const [prices, setPrices] = useState<Record<string, string>>(Object.fromEntries(Object.entries(pricing).map(([key, value]) => [key, str(value)])));
  const [tiers, setTiers] = useState<string[]>(props.id === null ? [] : listingTiers(props.document, props.id));
  const everyModelTiers = Object.entries(props.document.tiers)
    .filter(([, tier]) => Array.isArray(tier.models) && (tier.models as string[]).includes("*"))
    .map(([name]) => name);

  async function save() {
    const modelId = props.id ?? id.trim();
    // Price keys the form does not show (per_image, long_context) are kept as they are.
    const newPricing: Record<string, unknown> = { ...pricing };
    for (const key of options.data?.price_keys ?? []) {
      const value = (prices[key] ?? "").trim();
      if (value === "") delete newPricing[key];
      else newPricing[key] = value;
    }
    const fields: Record<string, unknown> = {
      ...otherSettingsChange(other, otherBefore, MODEL_FIELDS),
      kind,
      upstream_model: optional(upstream),
      context_window: optional(contextWindow, true),
      max_output_tokens: optional(maxOutput, true),
      modalities: input.length > 0 || output.length > 0 ? { input, output } : null,
      pricing: newPricing,
      provider: grouped ? null : provider,
    };
    let change =
      props.id === null
        ? await api<CatalogChange>("POST", "/admin/catalog/models", { name: modelId, entry: withoutNulls(fields), base_version: props.version })
        : await api<CatalogChange>("PATCH", entryPath("model", modelId), { set: fields, base_version: props.version });
    const before = props.id === null ? [] : listingTiers(props.document, props.id);
    for (const [name, tier] of Object.entries(props.document.tiers)) {
      const listed = Array.isArray(tier.models) ? (tier.models as string[]) : [];
      const wanted = tiers.includes(name);
      if (wanted === before.includes(name)) continue;
      const models = wanted ? [...listed, modelId] : listed.filter((m) => m !== modelId);
      change = await api<CatalogChange>("PATCH", entryPath("tier", name), { set: { models }, base_version: change.version.version });
    }
  }

  const toggle = (list: string[], set: (next: string[]) => void, value: string, on: boolean) => set(on ? [...list, value] : list.filter((v) => v !== value));
  const kinds = options.data?.model_kinds ?? [kind];
  const modalityNames = options.data?.modalities ?? [];
  return (
    <Dialog title={props.id === null ? "Add a model" : `Edit model ${props.id}`} onClose={props.onClose} testId="model-dialog" wide>
      <EntryForm save={save} done={props.id === null ? `Added model ${id.trim()}.` : `Saved model ${props.id}.`} onDone={props.onDone} onClose={props.onClose}>
        {props.id === null && <Field label="Model id" name="id" value={id} onChange={setId} required placeholder="vendor/model-name" />}
        <label>
          Kind
          <select name="kind" value={kind} onChange={(event) => setKind(event.target.value)}>
            {kinds.map((k) => (
              <option key={k}>{k}</option>
            ))}
          </select>
        </label>
        {grouped ? (
          <p className="hint">Served by a routing group: its deployments and routing are under Other settings.</p>
        ) : (
          <label>
            Provider
            <select name="provider" value={provider} onChange={(event) => setProvider(event.target.value)}>
              {providers.map((p) => (
                <option key={p}>{p}</option>
              ))}
            </select>
          </label>
        )}
        <Field label="Upstream model name" name="upstream_model" value={upstream} onChange={setUpstream} placeholder="(the model id)" />
        <Field label="Context window (tokens)" name="context_window" value={contextWindow} onChange={setContextWindow} />
        <Field label="Max output tokens" name="max_output_tokens" value={maxOutput} onChange={setMaxOutput} />
        {(["input", "output"] as const).map((side) => (
          <fieldset key={side}>
            <legend>{side === "input" ? "Input modalities" : "Output modalities"}</legend>
            {modalityNames.map((m) => {
              const [list, set] = side === "input" ? [input, setInput] : [output, setOutput];
              return (
                <label key={m} className="check">
                  <input type="checkbox" name={`${side}-${m}`} checked={list.includes(m)} onChange={(event) => toggle(list, set, m, event.target.checked)} /> {m}
                </label>
              );
            })}
          </fieldset>
        ))}
        <fieldset className="price-fields">
          <legend>Prices (USD; per million tokens for *_per_mtok)</legend>
          {(options.data?.price_keys ?? []).map((key) => (
            <Field key={key} label={key} name={key} value={prices[key] ?? ""} onChange={(value) => setPrices({ ...prices, [key]: value })} placeholder="—" />
          ))}
        </fieldset>
        <fieldset>
          <legend>Tiers</legend>
          {Object.keys(props.document.tiers).map((name) =>
            everyModelTiers.includes(name) ? (
              <label key={name} className="check">
                <input type="checkbox" checked disabled /> {name} (every model)
              </label>
            ) : (
              <label key={name} className="check">
                <input type="checkbox" name={`tier-${name}`} checked={tiers.includes(name)} onChange={(event) => toggle(tiers, setTiers, name, event.target.checked)} /> {name}
              </label>
            ),
          )}
        </fieldset>
        <OtherSettings
          value={other}
          onChange={setOther}
          hint='A routing group: {"deployments": [{"name": "a", "provider": "openai"}, {"name": "b", "provider": "azure", "priority": 1}], "routing": {"strategy": "ordered"}}; also default_output_tokens, prompt_caching.'
        />
      </EntryForm>
    </Dialog>
  );
}
