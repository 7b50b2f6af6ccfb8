// The caps, policy and limits form of one key (the keys page's "Caps" button): the draft the row
// keeps while the form opens and closes, the form itself, and the PATCH /keys/:id body it saves.
import type { FormEvent } from "react";
import type { Key, KeyLimits } from "../api";
import { modelLimitsText, parseModelLimits } from "./key-traffic";

/** The form's fields as typed, kept by the key's row so an edit survives closing the form. */
export interface CapsDraft {
  budget: string;
  tokens: string;
  clamp: boolean;
  models: string;
  networks: string;
  expires: string;
  period: string;
  periodBudget: string;
  periodTokens: string;
  rpm: string;
  tpm: string;
  concurrent: string;
  modelLimits: string;
}

export function capsDraftOf(key: Key): CapsDraft {
  const policy = key.policy;
  return {
    budget: key.budget_cap_usd ?? "",
    tokens: key.token_cap === null ? "" : String(key.token_cap),
    clamp: key.clamp_output,
    models: (policy.allowed_models ?? []).join(", "),
    networks: (policy.allowed_networks ?? []).join(", "),
    expires: policy.expires_at ?? "",
    period: policy.periodic_budget?.period ?? "",
    periodBudget: policy.periodic_budget?.budget_usd ?? "",
    periodTokens: policy.periodic_budget?.token_cap == null ? "" : String(policy.periodic_budget.token_cap),
    rpm: limitText(key.limits?.requests_per_minute),
    tpm: limitText(key.limits?.tokens_per_minute),
    concurrent: limitText(key.limits?.concurrent_requests),
    modelLimits: modelLimitsText(key.limits?.models),
  };
}

/** The PATCH /keys/:id body of a draft; throws on per-model limits it cannot read (parseModelLimits). */
export function capsRequestBody(draft: CapsDraft) {
  const { budget, tokens, clamp, models, networks, expires, period, periodBudget, periodTokens, rpm, tpm, concurrent, modelLimits } = draft;
  const list = (text: string) => (text.trim() === "" ? null : text.split(",").map((entry) => entry.trim()));
  // The key's own limits, for every model and per model.
  const perModel = parseModelLimits(modelLimits);
  const limits: KeyLimits = {
    ...(rpm.trim() && { requests_per_minute: Number(rpm) }),
    ...(tpm.trim() && { tokens_per_minute: Number(tpm) }),
    ...(concurrent.trim() && { concurrent_requests: Number(concurrent) }),
    ...(perModel && { models: perModel }),
  };
  return {
    budget_cap_usd: budget.trim() === "" ? null : budget.trim(),
    token_cap: tokens.trim() === "" ? null : Number(tokens),
    clamp_output: clamp,
    allowed_models: list(models),
    allowed_networks: list(networks),
    expires_at: expires.trim() === "" ? null : expires.trim(),
    period: period === "" ? null : period,
    period_budget_usd: period === "" || periodBudget.trim() === "" ? null : periodBudget.trim(),
    period_token_cap: period === "" || periodTokens.trim() === "" ? null : Number(periodTokens),
    limits: Object.keys(limits).length === 0 ? null : limits,
  };
}

export function KeyCapsForm(props: {
  label: string;
  draft: CapsDraft;
  onChange: (change: Partial<CapsDraft>) => void;
  onSubmit: (event: FormEvent) => void;
  onCancel: () => void;
}) {
  const { label, draft, onChange } = props;
  return (
    <form onSubmit={props.onSubmit} className="caps-form" aria-label={`Caps of ${label}`}>
      <label>
        Budget cap (USD)
        <input value={draft.budget} onChange={(e) => onChange({ budget: e.target.value })} placeholder="none" />
      </label>
      <label>
        Token cap
        <input value={draft.tokens} onChange={(e) => onChange({ tokens: e.target.value })} placeholder="none" />
      </label>
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
      <label>
        Per-model limits (one model a line: <code>model rpm=N tpm=N concurrent=N</code>)
        <textarea value={draft.modelLimits} onChange={(e) => onChange({ modelLimits: e.target.value })} rows={2} placeholder="none" />
      </label>
      <label>
        <input type="checkbox" checked={draft.clamp} onChange={(e) => onChange({ clamp: e.target.checked })} />
        Shorten answers the caps cannot cover (else refuse)
      </label>
      <label>
        Allowed models (comma-separated)
        <input value={draft.models} onChange={(e) => onChange({ models: e.target.value })} placeholder="every model of the tier" />
      </label>
      <label>
        Allowed networks (CIDR, comma-separated)
        <input value={draft.networks} onChange={(e) => onChange({ networks: e.target.value })} placeholder="anywhere" />
      </label>
      <label>
        Expires at (ISO date-time, UTC)
        <input value={draft.expires} onChange={(e) => onChange({ expires: e.target.value })} placeholder="never" />
      </label>
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
            <input value={draft.periodBudget} onChange={(e) => onChange({ periodBudget: e.target.value })} placeholder="none" />
          </label>
          <label>
            Per period (tokens)
            <input value={draft.periodTokens} onChange={(e) => onChange({ periodTokens: e.target.value })} placeholder="none" />
          </label>
        </>
      )}
      <button type="submit">Save caps</button>
      <button type="button" onClick={props.onCancel}>
        Cancel
      </button>
    </form>
  );
}

function limitText(value: number | undefined): string {
  return value === undefined ? "" : String(value);
}
