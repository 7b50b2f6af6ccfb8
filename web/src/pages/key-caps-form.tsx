// A key's caps, policy and limits, edited in a dialog (the Keys page's "Edit" button): spending, the
// models it may use (chosen from the models the account's tier includes), when it expires (a date
// picker), the networks it may be used from, and its rate limits. It saves with the same
// PATCH /keys/:id as before (docs/dashboard.md, "Key policies"); a refusal keeps the dialog open
// with what was typed. The draft lives in the key's row, so closing and reopening keeps an edit.
import { useState, type FormEvent } from "react";
import { api, type Key, type KeyLimits } from "../api";
import { ErrorText, useLoad } from "../components";
import { Dialog } from "../dialog";
import { GuardrailChooser } from "./guardrail-chooser";
import { modelLimitsText, parseModelLimits } from "./key-traffic";

/** The form's fields as typed, kept by the key's row so an edit survives closing the dialog. */
export interface CapsDraft {
  budget: string;
  tokens: string;
  clamp: boolean;
  /** null: every model of the tier; else the ids the key may use. */
  models: string[] | null;
  networks: string;
  /** MCP servers and tools (server or server__tool), comma-separated; "" for every one. */
  mcp: string;
  /** Default tags as typed, "project=atlas, env=prod" (docs/billing.md, "Tags and tag budgets"). */
  tags: string;
  /** The date picker's value (local time, "2026-05-01T09:30"); "" for never. */
  expires: string;
  /** The stored expiry, sent back unchanged while the picker still shows it (the picker has no seconds). */
  expiresStored: string | null;
  period: string;
  periodBudget: string;
  periodTokens: string;
  rpm: string;
  tpm: string;
  concurrent: string;
  modelLimits: string;
  /** The `selected` guardrails the key switches on. */
  guardrails: string[];
}

/** An ISO instant as a datetime-local value in the browser's time zone, to the minute. */
export function localPickerValue(iso: string): string {
  const at = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

export function capsDraftOf(key: Key): CapsDraft {
  const policy = key.policy;
  return {
    budget: key.budget_cap_usd ?? "",
    tokens: key.token_cap === null ? "" : String(key.token_cap),
    clamp: key.clamp_output,
    models: policy.allowed_models,
    networks: (policy.allowed_networks ?? []).join(", "),
    mcp: (policy.allowed_mcp ?? []).join(", "),
    tags: Object.entries(policy.default_tags ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(", "),
    expires: policy.expires_at ? localPickerValue(policy.expires_at) : "",
    expiresStored: policy.expires_at,
    period: policy.periodic_budget?.period ?? "",
    periodBudget: policy.periodic_budget?.budget_usd ?? "",
    periodTokens: policy.periodic_budget?.token_cap == null ? "" : String(policy.periodic_budget.token_cap),
    rpm: limitText(key.limits?.requests_per_minute),
    tpm: limitText(key.limits?.tokens_per_minute),
    concurrent: limitText(key.limits?.concurrent_requests),
    modelLimits: modelLimitsText(key.limits?.models),
    guardrails: policy.guardrails ?? [],
  };
}

/** The PATCH /keys/:id body of a draft; throws on per-model limits it cannot read (parseModelLimits). */
export function capsRequestBody(draft: CapsDraft) {
  const { budget, tokens, clamp, models, networks, mcp, tags, expires, expiresStored, period, periodBudget, periodTokens, rpm, tpm, concurrent, modelLimits, guardrails } = draft;
  const list = (text: string) => (text.trim() === "" ? null : text.split(",").map((entry) => entry.trim()));
  const perModel = parseModelLimits(modelLimits);
  const limits: KeyLimits = {
    ...(rpm.trim() && { requests_per_minute: Number(rpm) }),
    ...(tpm.trim() && { tokens_per_minute: Number(tpm) }),
    ...(concurrent.trim() && { concurrent_requests: Number(concurrent) }),
    ...(perModel && { models: perModel }),
  };
  let expiresAt: string | null = null;
  if (expires !== "") {
    if (expiresStored !== null && localPickerValue(expiresStored) === expires) expiresAt = expiresStored;
    else {
      const at = new Date(expires);
      if (Number.isNaN(at.getTime())) throw new Error("Expires: pick a date and a time, or clear the field for a key that never expires.");
      expiresAt = at.toISOString();
    }
  }
  return {
    budget_cap_usd: budget.trim() === "" ? null : budget.trim(),
    token_cap: tokens.trim() === "" ? null : Number(tokens),
    clamp_output: clamp,
    allowed_models: models,
    allowed_networks: list(networks),
    allowed_mcp: list(mcp),
    default_tags: defaultTagsOf(tags),
    expires_at: expiresAt,
    period: period === "" ? null : period,
    period_budget_usd: period === "" || periodBudget.trim() === "" ? null : periodBudget.trim(),
    period_token_cap: period === "" || periodTokens.trim() === "" ? null : Number(periodTokens),
    limits: Object.keys(limits).length === 0 ? null : limits,
    guardrails,
  };
}

/** "project=atlas, env=prod" as the default_tags object (null: none); the gateway checks each tag's bounds. */
function defaultTagsOf(text: string): Record<string, string> | null {
  const pairs = list(text);
  if (pairs === null) return null;
  return Object.fromEntries(
    pairs.map((pair) => {
      const eq = pair.indexOf("=");
      if (eq <= 0) throw new Error(`Default tags: "${pair}" is not key=value.`);
      return [pair.slice(0, eq).trim(), pair.slice(eq + 1).trim()];
    }),
  );
}

const list = (text: string) => (text.trim() === "" ? null : text.split(",").map((entry) => entry.trim()));

/** The dialog; `save` sends the body and resolves true when the gateway took it (the dialog then closes). */
export function KeyEditorDialog(props: {
  label: string;
  draft: CapsDraft;
  onChange: (change: Partial<CapsDraft>) => void;
  save: (body: ReturnType<typeof capsRequestBody>) => Promise<unknown>;
  onClose: () => void;
}) {
  const { label, draft, onChange } = props;
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setError(null);
    let body: ReturnType<typeof capsRequestBody>;
    try {
      body = capsRequestBody(draft);
    } catch (err) {
      setError(err);
      return;
    }
    setBusy(true);
    try {
      await props.save(body);
      props.onClose();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog title={`Edit key ${label}`} onClose={props.onClose} wide testId="key-editor">
      <form onSubmit={(event) => void submit(event)} className="key-editor" aria-label={`Caps of ${label}`}>
        <fieldset>
          <legend>Spending</legend>
          <div className="field-row">
            <label>
              Budget cap (USD)
              <input value={draft.budget} onChange={(e) => onChange({ budget: e.target.value })} inputMode="decimal" placeholder="none" />
            </label>
            <label>
              Token cap
              <input value={draft.tokens} onChange={(e) => onChange({ tokens: e.target.value })} inputMode="numeric" placeholder="none" />
            </label>
          </div>
          <div className="field-row">
            <label>
              Periodic budget
              <select value={draft.period} onChange={(e) => onChange({ period: e.target.value })}>
                <option value="">None</option>
                <option value="day">Daily</option>
                <option value="week">Weekly (from Monday)</option>
                <option value="month">Monthly</option>
              </select>
            </label>
            {draft.period !== "" && (
              <>
                <label>
                  Per period (USD)
                  <input value={draft.periodBudget} onChange={(e) => onChange({ periodBudget: e.target.value })} inputMode="decimal" placeholder="none" />
                </label>
                <label>
                  Per period (tokens)
                  <input value={draft.periodTokens} onChange={(e) => onChange({ periodTokens: e.target.value })} inputMode="numeric" placeholder="none" />
                </label>
              </>
            )}
          </div>
          <label className="check">
            <input type="checkbox" checked={draft.clamp} onChange={(e) => onChange({ clamp: e.target.checked })} />
            Shorten answers the caps cannot cover (else refuse)
          </label>
        </fieldset>
        <ModelChooser models={draft.models} onChange={(models) => onChange({ models })} />
        <GuardrailChooser chosen={draft.guardrails} onChange={(guardrails) => onChange({ guardrails })} label="Key guardrails" />
        <fieldset>
          <legend>Where and until when</legend>
          <div className="field-row">
            <label>
              Expires
              <input type="datetime-local" value={draft.expires} onChange={(e) => onChange({ expires: e.target.value })} />
            </label>
            {draft.expires !== "" && (
              <button type="button" className="link" onClick={() => onChange({ expires: "" })}>
                Never expires
              </button>
            )}
          </div>
          <p className="hint">{draft.expires === "" ? "The key never expires." : "In your browser's time zone; the gateway refuses the key from then on."}</p>
          <label>
            Allowed networks (addresses or CIDR ranges, comma-separated)
            <input value={draft.networks} onChange={(e) => onChange({ networks: e.target.value })} placeholder="anywhere" spellCheck={false} />
          </label>
          <label>
            MCP servers and tools at /mcp (a server, or server__tool; comma-separated)
            <input value={draft.mcp} onChange={(e) => onChange({ mcp: e.target.value })} placeholder="every one" spellCheck={false} />
            Default tags (key=value, comma-separated; they win over a request&apos;s x-gateway-tags)
            <input value={draft.tags} onChange={(e) => onChange({ tags: e.target.value })} placeholder="none" spellCheck={false} />
          </label>
        </fieldset>
        <fieldset>
          <legend>Rate limits</legend>
          <div className="field-row">
            <label>
              Requests per minute
              <input value={draft.rpm} onChange={(e) => onChange({ rpm: e.target.value })} inputMode="numeric" placeholder="tier default" />
            </label>
            <label>
              Tokens per minute
              <input value={draft.tpm} onChange={(e) => onChange({ tpm: e.target.value })} inputMode="numeric" placeholder="tier default" />
            </label>
            <label>
              Requests in flight
              <input value={draft.concurrent} onChange={(e) => onChange({ concurrent: e.target.value })} inputMode="numeric" placeholder="tier default" />
            </label>
          </div>
          <label>
            Per-model limits (one model a line: <code>model rpm=N tpm=N concurrent=N</code>)
            <textarea value={draft.modelLimits} onChange={(e) => onChange({ modelLimits: e.target.value })} rows={2} placeholder="none" spellCheck={false} />
          </label>
        </fieldset>
        <ErrorText error={error} />
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Save caps
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** Every model of the tier, or only the ones ticked: the models the account may use, as the Models page lists them. */
function ModelChooser(props: { models: string[] | null; onChange: (models: string[] | null) => void }) {
  const usable = useLoad(() => api<{ data: Array<{ id: string; kind: string }> }>("GET", "/models"), []);
  const chosen = props.models;
  // A model the key lists that the tier no longer has stays visible, so saving keeps or drops it knowingly.
  const ids = [...new Set([...(usable.data?.data.map((m) => m.id) ?? []), ...(chosen ?? [])])];
  const kindOf = new Map(usable.data?.data.map((m) => [m.id, m.kind]));
  const toggle = (id: string, on: boolean) => {
    const next = on ? [...(chosen ?? []), id] : (chosen ?? []).filter((m) => m !== id);
    props.onChange(next);
  };
  return (
    <fieldset>
      <legend>Models</legend>
      <div className="radio-row">
        <label>
          <input type="radio" name="model-scope" checked={chosen === null} onChange={() => props.onChange(null)} /> Every model of your tier
        </label>
        <label>
          <input type="radio" name="model-scope" checked={chosen !== null} onChange={() => props.onChange(chosen ?? [])} /> Only the models ticked
        </label>
      </div>
      <ErrorText error={usable.error} />
      {chosen !== null && (
        <div className="model-choices" role="group" aria-label="Allowed models">
          {ids.map((id) => (
            <label key={id} className="check">
              <input type="checkbox" checked={chosen.includes(id)} onChange={(e) => toggle(id, e.target.checked)} />
              <code>{id}</code>
              <span className="hint">{kindOf.get(id) ?? "not in your tier"}</span>
            </label>
          ))}
        </div>
      )}
      {chosen !== null && chosen.length === 0 && <p className="hint">Tick at least one model: a key allowed no model cannot be saved.</p>}
    </fieldset>
  );
}

function limitText(value: number | undefined): string {
  return value === undefined ? "" : String(value);
}
