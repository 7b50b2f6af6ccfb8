// Administrators: accounts, searchable by email or id, with status, admin flag, clamping, tier and
// balance; each links to its detail page (pages/admin-account.tsx). "Add a person" creates an account
// without a password and shows its set-password link once, to send to the person. Suspending or closing an account
// makes the gateway refuse its keys at once (account_suspended); setting it active restores them.
// Clamping off makes a request the account cannot fully cover a 402 instead of a shorter answer.
// Below: the audit log of every administrative change.
import { useState, type FormEvent } from "react";
import { api, type Account, type AdminAccount, type KeyLimits, type PasswordLink } from "../api";
import { ConfirmDialog } from "../dialog";
import { ErrorText, formatCount, formatDate, formatMoney, Link, Notice, TableScroll, useAction, useLoad } from "../components";
import { PasswordLinkPanel } from "./password-link-panel";

/** One audit log row as GET /dashboard/api/admin/audit returns it. */
export interface AuditRow {
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

/** The account's own limits in a few words ("60 rpm, 2 concurrent; 1 model"); the tier's when it has none. */
function limitsSummary(limits: KeyLimits | null | undefined): string {
  if (!limits) return "tier's";
  const parts = [
    limits.requests_per_minute !== undefined && `${formatCount(limits.requests_per_minute)} rpm`,
    limits.tokens_per_minute !== undefined && `${formatCount(limits.tokens_per_minute)} tpm`,
    limits.concurrent_requests !== undefined && `${formatCount(limits.concurrent_requests)} concurrent`,
  ].filter(Boolean);
  const models = Object.keys(limits.models ?? {}).length;
  return [parts.join(", "), models > 0 && `${models} ${models === 1 ? "model" : "models"}`].filter(Boolean).join("; ") || "tier's";
}

export function AdminPage(props: { me: Account }) {
  const [search, setSearch] = useState("");
  const [query, setQuery] = useState("");
  const list = useLoad(() => api<{ data: AdminAccount[]; total: number }>("GET", `/admin/accounts?limit=500${query ? `&q=${encodeURIComponent(query)}` : ""}`), [query]);
  const audit = useLoad(() => api<{ data: AuditRow[] }>("GET", "/admin/audit?limit=100"), []);
  const { error, status, run } = useAction(() => {
    list.reload();
    audit.reload();
  });
  const change = (account: Account, body: { status?: string; is_admin?: boolean; clamp_output?: boolean }, done: string) =>
    run(() => api("PATCH", `/admin/accounts/${encodeURIComponent(account.id)}`, body), done);
  // Suspending or closing shuts an account's keys out at once: asked first, naming the account.
  const [stopping, setStopping] = useState<{ account: Account; status: string } | null>(null);
  function chooseStatus(account: Account, status: string) {
    if (status === "active") void change(account, { status }, `${account.email} is now active.`);
    else setStopping({ account, status });
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    setQuery(search.trim());
  }

  const caption = list.data ? (query ? `${list.data.total} accounts matching “${query}”` : `${list.data.total} accounts`) : "Accounts";
  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">Accounts</h1>
      <AddPersonForm
        onCreated={() => {
          list.reload();
          audit.reload();
        }}
      />
      <h2 id="all-accounts-title">All accounts</h2>
      <form className="inline-form" role="search" aria-label="Search accounts" onSubmit={submit}>
        <label>
          Email or account id
          <input name="q" type="search" value={search} maxLength={254} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <button type="submit" className="primary">
          Search
        </button>
        {query && (
          <button type="button" onClick={() => (setSearch(""), setQuery(""))}>
            Show all
          </button>
        )}
      </form>
      <ErrorText error={error ?? list.error} />
      {status && <Notice>{status}</Notice>}
      {stopping && (
        <ConfirmDialog
          title={`${stopping.status === "closed" ? "Close" : "Suspend"} ${stopping.account.email}?`}
          confirmLabel={`Yes, ${stopping.status === "closed" ? "close" : "suspend"} ${stopping.account.email}`}
          danger
          onCancel={() => setStopping(null)}
          onConfirm={() => {
            const { account, status: next } = stopping;
            setStopping(null);
            void change(account, { status: next }, `${account.email} is now ${next}.`);
          }}
        >
          <p>
            The account <strong>{stopping.account.email}</strong> becomes <strong>{stopping.status}</strong>: every one of its keys is refused at once (402 account_suspended), and
            it can sign in only to read. Setting it active again restores its keys.
          </p>
        </ConfirmDialog>
      )}
      <TableScroll label="Accounts table">
        <table>
          <caption>{caption}</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Status</th>
              <th scope="col">Administrator</th>
              <th scope="col">Sign-in</th>
              <th scope="col">Clamp output</th>
              <th scope="col">Tier</th>
              <th scope="col">Limits</th>
              <th scope="col" className="num">
                Balance
              </th>
              <th scope="col" className="num">
                Spent
              </th>
              <th scope="col">Monthly budget</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.data.length === 0 && (
              <tr>
                <td colSpan={11}>No accounts found.</td>
              </tr>
            )}
            {list.data?.data.map((a) => {
              const self = a.id === props.me.id;
              return (
                <tr key={a.id}>
                  <th scope="row">
                    <Link to={`/admin/accounts/${encodeURIComponent(a.id)}`}>{a.email}</Link>
                  </th>
                  <td>
                    <label className="sr-only" htmlFor={`status-${a.id}`}>
                      Status of {a.email}
                    </label>
                    <select id={`status-${a.id}`} value={a.status} disabled={self} onChange={(e) => chooseStatus(a, e.target.value)}>
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
                  <td>{a.password_set ? "password set" : <span className="badge">no password yet</span>}</td>
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
                  <td>{a.tier}</td>
                  <td>{limitsSummary(a.limits)}</td>
                  <td className="num">{formatMoney(a.balance_usd)}</td>
                  <td className="num">{formatMoney(a.total_spent_usd)}</td>
                  <td>
                    {a.monthly_budget_usd === null ? "—" : formatMoney(a.monthly_budget_usd)}
                    {a.monthly_token_budget !== null && ` / ${formatCount(a.monthly_token_budget)} tokens`}
                  </td>
                  <td>{formatDate(a.created_at)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
      <h2 id="audit-title">Audit log</h2>
      <ErrorText error={audit.error} />
      <AuditTable rows={audit.data?.data ?? []} caption="The latest 100 administrative changes (admin API, dashboard, CLI)" />
    </section>
  );
}

/** A new person: an account without a password, and its set-password link shown once. */
function AddPersonForm(props: { onCreated: () => void }) {
  const [email, setEmail] = useState("");
  const [admin, setAdmin] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [created, setCreated] = useState<{ email: string; link: PasswordLink } | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const result = await api<{ account: AdminAccount; password_link: PasswordLink }>("POST", "/admin/accounts", { email: email.trim(), is_admin: admin });
      setCreated({ email: result.account.email, link: result.password_link });
      setEmail("");
      setAdmin(false);
      props.onCreated();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <h2 id="add-person-title">Add a person</h2>
      <p className="hint">
        The account starts without a password or balance; the person sets a password with the link, which you send them. Sign-up on the sign-in page follows the gateway&apos;s{" "}
        <code>server.signup</code> setting.
      </p>
      <form className="inline-form" onSubmit={(event) => void submit(event)} aria-labelledby="add-person-title">
        <label>
          Email of the new person
          <input name="email" type="email" required maxLength={254} autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} />
        </label>
        <label className="check">
          <input type="checkbox" checked={admin} onChange={(e) => setAdmin(e.target.checked)} /> Administrator
        </label>
        <button type="submit" className="primary" disabled={busy || email.trim() === ""}>
          Create and get a set-password link
        </button>
        <ErrorText error={error} />
      </form>
      {created && <PasswordLinkPanel email={created.email} link={created.link} onDismiss={() => setCreated(null)} />}
    </>
  );
}

export function AuditTable(props: { rows: AuditRow[]; caption: string }) {
  return (
    <TableScroll label={props.caption}>
      <table>
        <caption>{props.caption}</caption>
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
          {props.rows.length === 0 && (
            <tr>
              <td colSpan={7}>No changes recorded.</td>
            </tr>
          )}
          {props.rows.map((row) => (
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
                <code className="wrap">{fields(row.before)}</code>
              </td>
              <td>
                <code className="wrap">{fields(row.after)}</code>
              </td>
              <td>{row.client_address ?? "—"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
