// Alert subscriptions (docs/dashboard.md, "Alerts"; ADR 0040): an administrator's (the operator's
// events, /admin/alerts) or a workspace owner's (/workspaces/:id/alerts). Each subscription with its
// recent deliveries, a test event, enable/disable and delete (confirmed); the signing secret is shown
// once, right after creation. Spend reports download from the same page.
import { useState, type FormEvent } from "react";
import { api } from "../api";
import { ErrorText, formatDate, Notice, TableScroll, useAction, useLoad } from "../components";
import { ConfirmDialog } from "../dialog";

interface Subscription {
  id: string;
  workspace_id: string | null;
  url: string;
  format: "json" | "slack";
  events: string[];
  description: string | null;
  enabled: boolean;
  created_at: string;
}

interface Delivery {
  id: string;
  event_type: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
}

// The gateway's event catalogue (src/core/alert-events.ts); "test" is sent by the button only.
const EVENT_TYPES = [
  "budget.threshold",
  "key.exhausted",
  "balance.depleted",
  "provider_key.disabled",
  "upstream.breaker_open",
  "config.changed",
  "ledger.verify_failed",
  "credit.added",
  "report.daily",
  "report.weekly",
];

export function AdminAlertsPage() {
  return (
    <section aria-labelledby="alerts-page-title">
      <h1 id="alerts-page-title">Alerts</h1>
      <p className="hint">Webhooks for the gateway&apos;s events (budgets, keys, provider keys, config, ledger verify, credits, reports), signed with HMAC-SHA256.</p>
      <AlertsSection base="/admin/alerts" />
      <SpendReports query="" />
    </section>
  );
}

/** A workspace's alerts and spend reports, for its owner (on the workspace page). */
export function WorkspaceAlertsSection(props: { workspaceId: string }) {
  const id = encodeURIComponent(props.workspaceId);
  return (
    <section aria-labelledby="workspace-alerts-title">
      <h2 id="workspace-alerts-title">Alerts</h2>
      <AlertsSection base={`/workspaces/${id}/alerts`} />
      <SpendReports query={`&workspace_id=${id}`} />
    </section>
  );
}

function AlertsSection(props: { base: string }) {
  const list = useLoad(() => api<{ data: Subscription[] }>("GET", props.base), [props.base]);
  const { error, status, run } = useAction(() => list.reload());
  const [secret, setSecret] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Subscription | null>(null);
  const [shown, setShown] = useState<string | null>(null);

  async function create(body: Record<string, unknown>): Promise<boolean> {
    setSecret(null);
    return run(async () => {
      const created = await api<{ secret: string }>("POST", props.base, body);
      setSecret(created.secret);
    }, "Subscription added.");
  }

  return (
    <>
      <ErrorText error={list.error ?? error} />
      {status && <Notice>{status}</Notice>}
      {secret && (
        <p className="notice" data-testid="alert-secret">
          Signing secret (shown once; keep it to verify the X-Gateway-Signature header): <code>{secret}</code>
        </p>
      )}
      {list.data && (
        <TableScroll label="Alert subscriptions table">
          <table>
            <caption>Subscriptions</caption>
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Format</th>
                <th scope="col">Events</th>
                <th scope="col">Enabled</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.length === 0 && (
                <tr>
                  <td colSpan={5}>No subscriptions yet.</td>
                </tr>
              )}
              {list.data.data.map((s) => (
                <tr key={s.id} data-testid={`alert-${s.id}`}>
                  <th scope="row">
                    <code>{s.url}</code>
                    {s.description && <div className="hint">{s.description}</div>}
                  </th>
                  <td>{s.format}</td>
                  <td>{s.events.join(", ")}</td>
                  <td>{s.enabled ? "yes" : "no"}</td>
                  <td className="actions">
                    <button type="button" onClick={() => void run(() => api("POST", `${props.base}/${s.id}/test`), "Test event queued.")}>
                      Send test event
                    </button>
                    <button type="button" onClick={() => setShown(shown === s.id ? null : s.id)} aria-expanded={shown === s.id}>
                      Deliveries
                    </button>
                    <button
                      type="button"
                      onClick={() => void run(() => api("PATCH", `${props.base}/${s.id}`, { enabled: !s.enabled }), s.enabled ? "Subscription disabled." : "Subscription enabled.")}
                    >
                      {s.enabled ? "Disable" : "Enable"}
                    </button>
                    <button type="button" className="danger" onClick={() => setDeleting(s)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {shown && <Deliveries path={`${props.base}/${shown}/deliveries`} />}
      <SubscriptionForm onCreate={create} />
      {deleting && (
        <ConfirmDialog
          title={`Delete the subscription to ${deleting.url}?`}
          confirmLabel="Delete subscription"
          danger
          onCancel={() => setDeleting(null)}
          onConfirm={() => {
            const target = deleting;
            setDeleting(null);
            void run(() => api("DELETE", `${props.base}/${target.id}`), "Subscription deleted.");
          }}
        >
          <p>Its events stop at once and its deliveries are no longer shown.</p>
        </ConfirmDialog>
      )}
    </>
  );
}

function Deliveries(props: { path: string }) {
  const list = useLoad(() => api<{ data: Delivery[] }>("GET", `${props.path}?limit=20`), [props.path]);
  return (
    <div data-testid="alert-deliveries">
      <ErrorText error={list.error} />
      <button type="button" onClick={list.reload}>
        Refresh deliveries
      </button>
      {list.data && (
        <TableScroll label="Deliveries table">
          <table>
            <caption>Recent deliveries</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Next attempt</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.length === 0 && (
                <tr>
                  <td colSpan={6}>No deliveries yet.</td>
                </tr>
              )}
              {list.data.data.map((d) => (
                <tr key={d.id} data-testid={`delivery-${d.event_type}`}>
                  <th scope="row">{d.event_type}</th>
                  <td data-testid="delivery-status">{d.status}</td>
                  <td className="num">{d.attempts}</td>
                  <td>{d.last_error ?? (d.last_status === null ? "—" : `HTTP ${d.last_status}`)}</td>
                  <td>{d.next_attempt_at === null ? "—" : formatDate(d.next_attempt_at)}</td>
                  <td>{formatDate(d.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </div>
  );
}

function SubscriptionForm(props: { onCreate: (body: Record<string, unknown>) => Promise<boolean> }) {
  const [url, setUrl] = useState("");
  const [format, setFormat] = useState<"json" | "slack">("json");
  const [events, setEvents] = useState<string[]>(["budget.threshold"]);
  const [description, setDescription] = useState("");

  async function submit(event: FormEvent) {
    event.preventDefault();
    const ok = await props.onCreate({ url: url.trim(), format, events, ...(description.trim() !== "" && { description: description.trim() }) });
    if (ok) {
      setUrl("");
      setDescription("");
    }
  }

  const toggle = (type: string, on: boolean) => setEvents((now) => (on ? [...now, type] : now.filter((e) => e !== type)));

  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} aria-label="Add an alert subscription">
      <label>
        Endpoint URL
        <input name="url" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />
      </label>
      <label>
        Format
        <select name="format" value={format} onChange={(e) => setFormat(e.target.value === "slack" ? "slack" : "json")}>
          <option value="json">JSON (signed)</option>
          <option value="slack">Slack-compatible</option>
        </select>
      </label>
      <label>
        Description
        <input name="description" maxLength={200} value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <fieldset className="alert-events">
        <legend>Events</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type} className="check">
            <input type="checkbox" name="events" value={type} checked={events.includes(type)} onChange={(e) => toggle(type, e.target.checked)} /> {type}
          </label>
        ))}
      </fieldset>
      <button type="submit" className="primary" disabled={events.length === 0}>
        Add subscription
      </button>
    </form>
  );
}

/** The last whole day's or week's spend, as JSON or CSV (the account's, or with `&workspace_id=` a workspace's). */
function SpendReports(props: { query: string }) {
  const link = (period: string, format: string) => `/dashboard/api/reports/spend?period=${period}&format=${format}${props.query}`;
  return (
    <p data-testid="spend-reports">
      Spend reports:{" "}
      {(["daily", "weekly"] as const).map((period) => (
        <span key={period}>
          {period}{" "}
          <a href={link(period, "json")} download>
            JSON
          </a>{" "}
          <a href={link(period, "csv")} download>
            CSV
          </a>{" "}
        </span>
      ))}
    </p>
  );
}
