// Administrators: every account, with its status and admin flag. Suspending or closing an account
// makes the gateway refuse its keys at once (account_suspended); setting it active restores them.
// Clamping off makes a request the account cannot fully cover a 402 instead of a shorter answer.
import { api, type Account } from "../api";
import { ErrorText, formatDate, Notice, useAction, useLoad } from "../components";

/** One audit log row as GET /dashboard/api/admin/audit returns it. */
interface AuditRow {
  id: string;
  created_at: string;
  actor: { type: string; id: string | null; name: string | null };
  action: string;
  target: { type: string; id: string };
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
  client_address: string | null;
}

const fields = (value: Record<string, unknown> | null) => (value === null ? "—" : JSON.stringify(value));

export function AdminPage(props: { me: Account }) {
  const list = useLoad(() => api<{ data: Account[]; total: number }>("GET", "/admin/accounts?limit=500"), []);
  const audit = useLoad(() => api<{ data: AuditRow[] }>("GET", "/admin/audit?limit=100"), []);
  const { error, status, run } = useAction(() => {
    list.reload();
    audit.reload();
  });
  const change = (account: Account, body: { status?: string; is_admin?: boolean; clamp_output?: boolean }, done: string) =>
    run(() => api("PATCH", `/admin/accounts/${encodeURIComponent(account.id)}`, body), done);

  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">Accounts</h1>
      <ErrorText error={error ?? list.error} />
      {status && <Notice>{status}</Notice>}
      <table>
        <caption>{list.data ? `${list.data.total} accounts` : "Accounts"}</caption>
        <thead>
          <tr>
            <th scope="col">Email</th>
            <th scope="col">Status</th>
            <th scope="col">Administrator</th>
            <th scope="col">Clamp output</th>
            <th scope="col">Balance (USD)</th>
            <th scope="col">Spent (USD)</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {list.data?.data.map((a) => {
            const self = a.id === props.me.id;
            return (
              <tr key={a.id}>
                <th scope="row">{a.email}</th>
                <td>
                  <label className="sr-only" htmlFor={`status-${a.id}`}>
                    Status of {a.email}
                  </label>
                  <select
                    id={`status-${a.id}`}
                    value={a.status}
                    disabled={self}
                    onChange={(e) => void change(a, { status: e.target.value }, `${a.email} is now ${e.target.value}.`)}
                  >
                    <option value="active">active</option>
                    <option value="suspended">suspended</option>
                    <option value="closed">closed</option>
                  </select>
                </td>
                <td>
                  <label>
                    <input
                      type="checkbox"
                      checked={a.is_admin}
                      disabled={self}
                      onChange={(e) => void change(a, { is_admin: e.target.checked }, `${a.email} ${e.target.checked ? "is now" : "is no longer"} an administrator.`)}
                    />
                    <span className="sr-only">Administrator: {a.email}</span>
                  </label>
                </td>
                <td>
                  <label>
                    <input
                      type="checkbox"
                      checked={a.clamp_output}
                      onChange={(e) =>
                        void change(a, { clamp_output: e.target.checked }, `${a.email}: requests beyond the budget are ${e.target.checked ? "clamped" : "refused"}.`)
                      }
                    />
                    <span className="sr-only">Clamp output: {a.email}</span>
                  </label>
                </td>
                <td>{a.balance_usd}</td>
                <td>{a.total_spent_usd}</td>
                <td>{formatDate(a.created_at)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <h2 id="audit-title">Audit log</h2>
      <ErrorText error={audit.error} />
      <table aria-labelledby="audit-title">
        <caption>The latest 100 administrative changes (admin API, dashboard, CLI)</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Actor</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Before</th>
            <th scope="col">After</th>
            <th scope="col">From</th>
          </tr>
        </thead>
        <tbody>
          {audit.data?.data.map((row) => (
            <tr key={row.id}>
              <td>{formatDate(row.created_at)}</td>
              <td>
                {row.actor.type}: {row.actor.name ?? row.actor.id ?? "—"}
              </td>
              <td>{row.action}</td>
              <td>
                {row.target.type} {row.target.id}
              </td>
              <td>
                <code>{fields(row.before)}</code>
              </td>
              <td>
                <code>{fields(row.after)}</code>
              </td>
              <td>{row.client_address ?? "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
