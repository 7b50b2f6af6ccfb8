// The Catalog page's per-entry editing (docs/dashboard.md, "Catalog"): a dialog per entry (provider,
// tier; the model form is catalog-model-form.tsx), and each row's Edit, Disable/Enable and Delete.
// Every save is one call of /dashboard/api/admin/catalog/{providers,models,tiers}, made from the
// version the page shows: a change made meanwhile by someone else is refused (409) and shown.
import { useId, useState, type FormEvent, type ReactNode } from "react";
import { api, type CatalogDocument } from "../api";
import { ErrorText, useLoad } from "../components";
import { Dialog } from "../dialog";
import type { Run } from "./catalog-provider-keys";

export type EntityKind = "provider" | "model" | "tier" | "mcp_server";
export const SEGMENT: Record<EntityKind, string> = { provider: "providers", model: "models", tier: "tiers", mcp_server: "mcp-servers" };

/** GET /admin/catalog/entry-options: what the forms offer, from the server's schema. */
export interface EntryOptions {
  upstream_types: string[];
  model_kinds: string[];
  modalities: string[];
  price_keys: string[];
}

export function useEntryOptions() {
  return useLoad(() => api<EntryOptions>("GET", "/admin/catalog/entry-options"), []);
}

/** The answer of a write: the catalog version it made. */
export interface CatalogChange {
  version: { version: number };
}

export function entryPath(kind: EntityKind, name: string): string {
  return `/admin/catalog/${SEGMENT[kind]}/${encodeURIComponent(name)}`;
}

/**
 * A dialog's form: runs `save`, shows its error in the dialog (the form keeps what was typed), and
 * on success reports `done` to the page and closes.
 */
export function EntryForm(props: { save: () => Promise<unknown>; done: string; onDone: (message: string) => void; onClose: () => void; children: ReactNode }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    setBusy(true);
    try {
      await props.save();
      props.onDone(props.done);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return (
    <form className="entry-form" onSubmit={(event) => void submit(event)}>
      {props.children}
      <ErrorText error={error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          Save
        </button>
        <button type="button" onClick={props.onClose}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** A text field; empty means "not set". */
export function Field(props: { label: string; value: string; onChange: (value: string) => void; type?: string; required?: boolean; placeholder?: string; name?: string }) {
  return (
    <label>
      {props.label}
      <input
        name={props.name}
        type={props.type ?? "text"}
        value={props.value}
        required={props.required}
        placeholder={props.placeholder}
        onChange={(event) => props.onChange(event.target.value)}
      />
    </label>
  );
}

/** A field's value for PATCH: the text, a number, or null (remove the field) when empty. */
export function optional(value: string, numeric = false): string | number | null {
  const trimmed = value.trim();
  if (trimmed === "") return null;
  return numeric && /^\d+$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/** Only the fields that are set (for a new entry, where "remove" means nothing). */
export function withoutNulls(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null));
}

/**
 * The entry's fields that a form has no control for (a provider's headers or apis, a tier's limits or
 * price factor, a model's routing group or default output), as JSON the operator edits; the server
 * checks them like every other field. `disabled` is left to the row's Disable/Enable.
 */
export function otherSettingsOf(entry: Record<string, unknown>, shown: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(entry).filter(([key]) => !shown.includes(key) && key !== "disabled"));
}

/** The fields the JSON sets, and null (remove) for each one it no longer has; throws, naming the problem, for text that is not a JSON object. */
export function otherSettingsChange(text: string, before: Record<string, unknown>, shown: readonly string[]): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = text.trim() === "" ? {} : JSON.parse(text);
  } catch (error) {
    throw new Error(`Other settings: not valid JSON (${(error as Error).message}).`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error('Other settings: write a JSON object, { "field": value }.');
  const change: Record<string, unknown> = Object.fromEntries(Object.keys(before).map((key) => [key, null]));
  for (const [key, value] of Object.entries(parsed)) {
    if (shown.includes(key) || key === "disabled") throw new Error(`Other settings: ${key} has its own control in this form.`);
    change[key] = value;
  }
  return change;
}

export function OtherSettings(props: { value: string; onChange: (value: string) => void; hint: string }) {
  const hintId = useId();
  return (
    <>
      <label>
        Other settings (JSON)
        <textarea
          name="other_settings"
          rows={Math.min(12, Math.max(3, props.value.split("\n").length))}
          value={props.value}
          onChange={(event) => props.onChange(event.target.value)}
          spellCheck={false}
          aria-describedby={hintId}
        />
      </label>
      <p className="hint" id={hintId}>
        {props.hint}
      </p>
    </>
  );
}

const pretty = (value: Record<string, unknown>) => (Object.keys(value).length === 0 ? "" : JSON.stringify(value, null, 2));

const str = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : "");

const PROVIDER_FIELDS = ["type", "base_url", "api_version", "region", "timeout_ms"] as const;
const TIER_FIELDS = ["models"] as const;

export function ProviderDialog(props: { name: string | null; document: CatalogDocument; version: number; onDone: (message: string) => void; onClose: () => void }) {
  const entry = props.name === null ? {} : (props.document.providers[props.name] ?? {});
  const options = useEntryOptions();
  const [name, setName] = useState(props.name ?? "");
  const [type, setType] = useState(str(entry.type) || "openai");
  const [baseUrl, setBaseUrl] = useState(str(entry.base_url));
  const [apiVersion, setApiVersion] = useState(str(entry.api_version));
  const [region, setRegion] = useState(str(entry.region));
  const [timeoutMs, setTimeoutMs] = useState(str(entry.timeout_ms));
  const otherBefore = otherSettingsOf(entry, PROVIDER_FIELDS);
  const [other, setOther] = useState(pretty(otherBefore));
  const save = () => {
    const fields = {
      ...otherSettingsChange(other, otherBefore, PROVIDER_FIELDS),
      type,
      base_url: baseUrl.trim(),
      api_version: optional(apiVersion),
      region: optional(region),
      timeout_ms: optional(timeoutMs, true),
    };
    return props.name === null
      ? api("POST", "/admin/catalog/providers", { name: name.trim(), entry: withoutNulls(fields), base_version: props.version })
      : api("PATCH", entryPath("provider", props.name), { set: fields, base_version: props.version });
  };
  return (
    <Dialog title={props.name === null ? "Add a provider" : `Edit provider ${props.name}`} onClose={props.onClose} testId="provider-dialog">
      <EntryForm save={save} done={props.name === null ? `Added provider ${name.trim()}.` : `Saved provider ${props.name}.`} onDone={props.onDone} onClose={props.onClose}>
        {props.name === null && <Field label="Name" name="name" value={name} onChange={setName} required />}
        <label>
          Type
          <select name="type" value={type} onChange={(event) => setType(event.target.value)}>
            {(options.data?.upstream_types ?? [type]).map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <Field label="Base URL" name="base_url" type="url" value={baseUrl} onChange={setBaseUrl} required placeholder="https://api.openai.com/v1" />
        <Field label="API version (azure-openai)" name="api_version" value={apiVersion} onChange={setApiVersion} />
        <Field label="Region (bedrock)" name="region" value={region} onChange={setRegion} />
        <Field label="Timeout (ms)" name="timeout_ms" value={timeoutMs} onChange={setTimeoutMs} placeholder="600000" />
        <OtherSettings value={other} onChange={setOther} hint='For example {"headers": {"x-team": "ml"}, "apis": ["chat"]}; see docs/configuration.md.' />
        <p className="hint">Keys are added under Provider keys, stored encrypted, never in the catalog.</p>
      </EntryForm>
    </Dialog>
  );
}

export function TierDialog(props: { name: string | null; document: CatalogDocument; version: number; onDone: (message: string) => void; onClose: () => void }) {
  const entry = props.name === null ? {} : (props.document.tiers[props.name] ?? {});
  const [name, setName] = useState(props.name ?? "");
  const [models, setModels] = useState<string[]>(Array.isArray(entry.models) ? (entry.models as string[]) : []);
  const ids = ["*", ...props.document.models.map((m) => str(m.id))];
  const toggle = (id: string, on: boolean) => setModels(on ? [...models, id] : models.filter((m) => m !== id));
  const otherBefore = otherSettingsOf(entry, TIER_FIELDS);
  const [other, setOther] = useState(pretty(otherBefore));
  const save = () => {
    const fields = { ...otherSettingsChange(other, otherBefore, TIER_FIELDS), models };
    return props.name === null
      ? api("POST", "/admin/catalog/tiers", { name: name.trim(), entry: withoutNulls(fields), base_version: props.version })
      : api("PATCH", entryPath("tier", props.name), { set: fields, base_version: props.version });
  };
  return (
    <Dialog title={props.name === null ? "Add a tier" : `Edit tier ${props.name}`} onClose={props.onClose} testId="tier-dialog">
      <EntryForm save={save} done={props.name === null ? `Added tier ${name.trim()}.` : `Saved tier ${props.name}.`} onDone={props.onDone} onClose={props.onClose}>
        {props.name === null && <Field label="Name" name="name" value={name} onChange={setName} required />}
        <fieldset>
          <legend>Models of the tier</legend>
          {ids.map((id) => (
            <label key={id} className="check">
              <input type="checkbox" checked={models.includes(id)} onChange={(event) => toggle(id, event.target.checked)} /> {id === "*" ? "* (every model)" : id}
            </label>
          ))}
        </fieldset>
        <OtherSettings value={other} onChange={setOther} hint='For example {"price_factor": "1.5", "limits": {"requests_per_minute": 600}}.' />
      </EntryForm>
    </Dialog>
  );
}

/** A row's Edit, Disable/Enable (providers, models and MCP servers) and Delete (after confirming). */
export function EntryActions(props: { kind: EntityKind; name: string; disabled: boolean; version: number; run: Run; onEdit: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const { kind, name } = props;
  const state = props.disabled ? "enable" : "disable";
  return (
    <div className="actions">
      <button type="button" onClick={props.onEdit} aria-label={`Edit ${kind} ${name}`}>
        Edit
      </button>
      {kind !== "tier" && (
        <button
          type="button"
          aria-label={`${props.disabled ? "Enable" : "Disable"} ${kind} ${name}`}
          onClick={() =>
            void props.run(() => api("POST", `${entryPath(kind, name)}/${state}`, { base_version: props.version }), `${props.disabled ? "Enabled" : "Disabled"} ${kind} ${name}.`)
          }
        >
          {props.disabled ? "Enable" : "Disable"}
        </button>
      )}
      {confirming ? (
        <span role="alertdialog" aria-label={`Delete ${kind} ${name}?`} className="confirm">
          Delete {kind} {name}?{" "}
          <button
            type="button"
            className="danger"
            onClick={() => {
              setConfirming(false);
              void props.run(() => api("DELETE", `${entryPath(kind, name)}?base_version=${props.version}`), `Deleted ${kind} ${name}.`);
            }}
          >
            Yes, delete
          </button>{" "}
          <button type="button" onClick={() => setConfirming(false)}>
            Cancel
          </button>
        </span>
      ) : (
        <button type="button" className="danger" aria-label={`Delete ${kind} ${name}`} onClick={() => setConfirming(true)}>
          Delete
        </button>
      )}
    </div>
  );
}
