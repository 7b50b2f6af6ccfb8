// Administrators: every upstream key's and routing deployment's circuit breaker, each key's 429
// cooldown and last error, as `gateway admin upstreams status` shows them, refreshed every 5 seconds
// while the page is open.
import { useEffect, useState } from "react";
import { api, type BreakerStatus, type ProbeStatus, type UpstreamKeyStatus, type UpstreamStatuses } from "../api";
import { ErrorText, formatDate, useLoad } from "../components";

const REFRESH_MS = 5_000;
const STATE_LABELS: Record<BreakerStatus["state"], { text: string; symbol: string }> = {
  closed: { text: "closed", symbol: "✓" },
  open: { text: "open", symbol: "✕" },
  half_open: { text: "half-open", symbol: "◐" },
};

export function UpstreamsPage() {
  // Every round is a fresh load; the refresh button and the timer both start one.
  const [round, setRound] = useState(0);
  const statuses = useLoad(async () => ({ ...(await api<UpstreamStatuses>("GET", "/admin/upstreams")), fetchedAt: new Date() }), [round]);
  const [auto, setAuto] = useState(true);
  const reload = () => setRound((r) => r + 1);
  useEffect(() => {
    if (!auto) return;
    const timer = setInterval(() => {
      if (!document.hidden) setRound((r) => r + 1);
    }, REFRESH_MS);
    return () => clearInterval(timer);
  }, [auto]);

  const byProvider = new Map<string, UpstreamKeyStatus[]>();
  for (const key of statuses.data?.keys ?? []) byProvider.set(key.provider, [...(byProvider.get(key.provider) ?? []), key]);
  const deployments = statuses.data?.deployments ?? [];

  return (
    <section aria-labelledby="upstreams-title">
      <h1 id="upstreams-title">Upstream health</h1>
      <p className="hint">
        Each upstream key&apos;s circuit breaker: an open breaker sends no requests to the key until its next trial; half-open means the next request is that trial. Error rate,
        requests and p50 latency cover the last window a gateway process wrote.
      </p>
      <div className="actions">
        <button type="button" onClick={reload}>
          Refresh
        </button>
        <label>
          <input type="checkbox" checked={auto} onChange={(e) => setAuto(e.target.checked)} /> Refresh every 5 s
        </label>
        <span className="hint">{statuses.data ? `Updated ${statuses.data.fetchedAt.toLocaleTimeString()}` : "Loading…"}</span>
      </div>
      <ErrorText error={statuses.error} />
      {statuses.data && byProvider.size === 0 && <p>No upstream keys are configured.</p>}
      {[...byProvider].map(([provider, keys]) => (
        <BreakerTable key={provider} caption={`${provider}: ${keys.length} ${keys.length === 1 ? "key" : "keys"}`} columns={["Key", "Owner"]} rows={keys.map(keyRow)} />
      ))}
      {deployments.length > 0 && (
        <BreakerTable
          caption="Routing deployments"
          columns={["Deployment", "Provider"]}
          rows={deployments.map((d) => ({ id: d.deployment, name: d.deployment, detail: d.provider, status: d }))}
        />
      )}
      <HealthProbes probed={deployments.flatMap((d) => (d.probe ? [{ deployment: d.deployment, provider: d.provider, probe: d.probe }] : []))} />
    </section>
  );
}

interface BreakerRow {
  id: string;
  name: string;
  /** The owner of a key, the provider of a deployment. */
  detail: string;
  status: BreakerStatus;
}

function keyRow(key: UpstreamKeyStatus): BreakerRow {
  return { id: key.upstream_key_id ?? key.fingerprint, name: key.fingerprint, detail: key.account_email ?? "shared", status: key };
}

function BreakerTable(props: { caption: string; columns: [string, string]; rows: BreakerRow[] }) {
  return (
    // Scrolls sideways on a narrow screen; focusable so a keyboard can scroll it too.
    <div className="table-scroll" role="region" aria-label={props.caption} tabIndex={0}>
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">{props.columns[0]}</th>
            <th scope="col">{props.columns[1]}</th>
            <th scope="col">State</th>
            <th scope="col">Error rate</th>
            <th scope="col">Requests in window</th>
            <th scope="col">p50 latency</th>
            <th scope="col">Next trial</th>
            <th scope="col">Last change</th>
            <th scope="col">429 cooldown</th>
            <th scope="col">Last error</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map(({ id, name, detail, status }) => (
            <tr key={id}>
              <th scope="row">
                <code>{name}</code>
              </th>
              <td>{detail}</td>
              <td>
                <StateBadge state={status.state} />
              </td>
              <td>{status.error_rate === null ? "—" : `${Math.round(status.error_rate * 100)}% (${status.failures} failed)`}</td>
              <td>{status.requests}</td>
              <td>{status.p50_ms === null ? "—" : `${status.p50_ms} ms`}</td>
              <td>{nextTrial(status)}</td>
              <td>{formatDate(status.state_changed_at)}</td>
              <td>{status.rate_limit_cooldown_seconds > 0 ? `${status.rate_limit_cooldown_seconds} s left` : "—"}</td>
              <td>{status.last_error === null ? "—" : `${status.last_error} (${formatDate(status.last_error_at)})`}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** The deployments with a health_check: how often they are probed and what the last probe found. */
function HealthProbes(props: { probed: Array<{ deployment: string; provider: string; probe: ProbeStatus }> }) {
  if (props.probed.length === 0) return null;
  return (
    <div className="table-scroll" role="region" aria-label="Health probes" tabIndex={0}>
      <table>
        <caption>Health probes</caption>
        <thead>
          <tr>
            <th scope="col">Deployment</th>
            <th scope="col">Provider</th>
            <th scope="col">Every</th>
            <th scope="col">Last probe</th>
            <th scope="col">Status</th>
            <th scope="col">Latency</th>
            <th scope="col">Checked</th>
            <th scope="col">Failures in a row</th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {props.probed.map(({ deployment, provider, probe }) => (
            <tr key={deployment}>
              <th scope="row">
                <code>{deployment}</code>
              </th>
              <td>{provider}</td>
              <td>{probe.interval_s} s</td>
              <td>{probe.ok === null ? "not yet" : <span className={`badge ${probe.ok ? "enabled" : "bad"}`}>{probe.ok ? "passing" : "failing"}</span>}</td>
              <td>{probe.status === null ? (probe.ok === null ? "—" : "no response") : `HTTP ${probe.status}`}</td>
              <td>{probe.latency_ms === null ? "—" : `${probe.latency_ms} ms`}</td>
              <td>{formatDate(probe.checked_at)}</td>
              <td>{probe.failures_in_row}</td>
              <td>{probe.error ?? "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function StateBadge(props: { state: BreakerStatus["state"] }) {
  const label = STATE_LABELS[props.state];
  return (
    <span className={`badge breaker-${props.state}`} data-testid="breaker-state">
      <span aria-hidden="true">{label.symbol} </span>
      {label.text}
    </span>
  );
}

function nextTrial(status: BreakerStatus): string {
  if (status.state === "open") return `in ${status.cooldown_seconds} s`;
  if (status.state === "half_open") return "now";
  return "—";
}
