// Administrators: every account, with its status and admin flag. Suspending or closing an account
// makes the gateway refuse its keys at once (account_suspended); setting it active restores them.
// Clamping off makes a request the account cannot fully cover a 402 instead of a shorter answer.
import { api, type Account } from "../api";
import { ErrorText, formatDate, Notice, useAction, useLoad } from "../components";

export function AdminPage(props: { me: Account }) {
  const list = useLoad(() => api<{ data: Account[]; total: number }>("GET", "/admin/accounts?limit=500"), []);
  const { error, status, run } = useAction(() => list.reload());
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
    </section>
  );
}
