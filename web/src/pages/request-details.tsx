// One request of the log in full (a row of the Requests page, opened): when, which route, the model
// the client asked for (also one that does not exist) and the one that served, the status with the
// error's type and message, timings, attempts, tokens and cost. Never prompt or answer text: the log
// holds none.
import type { ReactNode } from "react";
import { formatCount, formatDate, Money } from "../components";
import { Dialog } from "../dialog";

/** A row of GET /dashboard/api/requests (docs/dashboard.md, "Requests"). */
export interface RequestRow {
  request_id: string;
  created_at: string;
  key_id: string | null;
  key_name: string | null;
  key_prefix: string | null;
  method: string;
  route: string;
  model: string | null;
  deployment: string | null;
  status: number;
  error_type: string | null;
  error_message: string | null;
  /** The model id the client sent, also one that does not exist. */
  requested_model: string | null;
  latency_ms: number;
  first_byte_ms: number | null;
  attempts: number | null;
  input_tokens: number | null;
  cached_tokens: number | null;
  output_tokens: number | null;
  reasoning_tokens: number | null;
  cost_usd: string | null;
  estimated: boolean | null;
  /** Administrators' view only. */
  account_id?: string | null;
  provider?: string | null;
}

export const ms = (value: number | null) => (value === null ? "—" : value.toFixed(1));

export function RequestDetails(props: { row: RequestRow; onClose: () => void }) {
  const { row } = props;
  const facts: Array<[string, ReactNode]> = [
    ["Request ID", <code key="id">{row.request_id}</code>],
    ["Time", formatDate(row.created_at)],
    ["Route", <code key="route">{`${row.method} ${row.route}`}</code>],
    ["Model asked for", row.requested_model ?? "none named"],
    ["Model served", row.model ?? (row.requested_model ? "none: no model of that name was served" : "—")],
    ["Status", String(row.status)],
    ["Error type", row.error_type ?? "none"],
    ["Error message", row.error_message ?? "none"],
    ["Key", row.key_name ?? row.key_prefix ?? row.key_id ?? "(no key)"],
    ...(row.account_id !== undefined ? [["Account", row.account_id ?? "(no key)"] as [string, string]] : []),
    ...(row.provider !== undefined ? [["Provider", row.provider ?? "—"] as [string, string]] : []),
    ["Deployment", row.deployment ?? "—"],
    ["Latency", `${ms(row.latency_ms)} ms`],
    ["First byte", row.first_byte_ms === null ? "— (not a stream)" : `${ms(row.first_byte_ms)} ms`],
    ["Upstream attempts", row.attempts === null ? "—" : formatCount(row.attempts)],
    [
      "Tokens",
      row.input_tokens === null
        ? "none metered"
        : `${formatCount(row.input_tokens)} in (${formatCount(row.cached_tokens ?? 0)} cached), ${formatCount(row.output_tokens ?? 0)} out (${formatCount(row.reasoning_tokens ?? 0)} reasoning)${row.estimated ? ", estimated" : ""}`,
    ],
    ["Cost", row.cost_usd === null ? "none" : <Money key="cost" usd={row.cost_usd} />],
  ];
  return (
    <Dialog title={`Request ${row.status >= 400 ? "refused" : "answered"}: ${row.status}`} onClose={props.onClose} wide testId="request-details">
      <dl className="details">
        {facts.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </Dialog>
  );
}
