// One workspace: members and their roles, invites (owner/admin), the shared keys and their usage.
import { useState, type FormEvent } from "react";
import { api, type Account, type Invite, type Key, type UsageSummary, type Workspace } from "../api";
import { TagTable, TotalsTable, UsageChart } from "../chart";
import { ErrorText, formatDate, Money, Notice, TableScroll, useAction, useLoad } from "../components";
import { WorkspaceAlertsSection } from "./alerts";
import { WorkspaceBudgetsSection } from "./workspace-budgets";
import { CacheSettingSection } from "./cache-setting";

interface Detail {
  workspace: Workspace;
  /** null: an administrator who is not a member reads the page (and changes nothing). */
  role: "owner" | "admin" | "member" | null;
  members: Array<{ account_id: string; email: string; role: "owner" | "admin" | "member"; joined_at: string }>;
}

export function WorkspacePage(props: { id: string; me: Account }) {
  const base = `/workspaces/${encodeURIComponent(props.id)}`;
  const detail = useLoad(() => api<Detail>("GET", base), [base]);
  const keys = useLoad(() => api<{ data: Key[] }>("GET", `${base}/keys`), [base]);
  const usage = useLoad(() => api<UsageSummary>("GET", `${base}/usage?days=30`), [base]);
  const d = detail.data;
  const manager = d?.role === "owner" || d?.role === "admin";

  const { error, status, run } = useAction(() => {
    detail.reload();
    keys.reload();
  });

  if (detail.error) return <ErrorText error={detail.error} />;
  if (!d) return <p className="loading">Loading…</p>;
  return (
    <section aria-labelledby="ws-name">
      <h1 id="ws-name">{d.workspace.name}</h1>
      <p className="hint">
        {d.role === null ? (
          <>You are not a member: as an administrator you see this workspace, read-only.</>
        ) : (
          <>
            Your role: <span className={`badge role-${d.role}`}>{d.role}</span>
          </>
        )}
      </p>
      <ErrorText error={error} />
      {status && <Notice>{status}</Notice>}
      <TableScroll label="Members table">
        <table>
          <caption>Members</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {d.members.map((m) => {
              const self = m.account_id === props.me.id;
              const canRemove = m.role !== "owner" && (self || d.role === "owner" || (d.role === "admin" && m.role === "member"));
              return (
                <tr key={m.account_id}>
                  <th scope="row">{m.email}</th>
                  <td>
                    {d.role === "owner" && m.role !== "owner" ? (
                      <>
                        <label className="sr-only" htmlFor={`role-${m.account_id}`}>
                          Role of {m.email}
                        </label>
                        <select
                          id={`role-${m.account_id}`}
                          value={m.role}
                          onChange={(e) =>
                            void run(() => api("PATCH", `${base}/members/${encodeURIComponent(m.account_id)}`, { role: e.target.value }), `${m.email} is now ${e.target.value}.`)
                          }
                        >
                          <option value="member">member</option>
                          <option value="admin">admin</option>
                        </select>
                      </>
                    ) : (
                      <span className={`badge role-${m.role}`}>{m.role}</span>
                    )}
                  </td>
                  <td>{formatDate(m.joined_at)}</td>
                  <td>
                    {canRemove && (
                      <button
                        type="button"
                        className="danger"
                        onClick={() =>
                          void run(() => api("DELETE", `${base}/members/${encodeURIComponent(m.account_id)}`), self ? "You left the workspace." : `${m.email} removed.`)
                        }
                      >
                        {self ? "Leave workspace" : `Remove ${m.email}`}
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
      {manager && <Invites base={base} owner={d.role === "owner"} />}
      <TableScroll label="Shared keys table">
        <table>
          <caption>Shared keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Owner</th>
              <th scope="col">Status</th>
              <th scope="col">Spent (USD)</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.data?.data.length === 0 && (
              <tr>
                <td colSpan={5}>No keys are shared in this workspace. Pick it when you create a key.</td>
              </tr>
            )}
            {keys.data?.data.map((k) => (
              <tr key={k.id}>
                <th scope="row">{k.name || k.prefix}</th>
                <td>{k.owner_email ?? "—"}</td>
                <td>
                  <span className={`badge ${k.status}`}>{k.status}</span>
                </td>
                <td className="num">
                  <Money usd={k.spent_usd} />
                </td>
                <td>
                  {k.status !== "revoked" && (manager || k.account_id === props.me.id) && (
                    <button
                      type="button"
                      className="danger"
                      onClick={() => void run(() => api("DELETE", `${base}/keys/${encodeURIComponent(k.id)}?confirm=true`), `Key ${k.name || k.prefix} revoked.`)}
                    >
                      Revoke {k.name || k.prefix}
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <WorkspaceBudgetsSection base={base} manager={manager} />
      {d.role === "owner" && <WorkspaceAlertsSection workspaceId={props.id} />}
      {d.role && <CacheSettingSection base={base} label={d.workspace.name} canChange={manager} />}
      <h2>Shared usage (30 days)</h2>
      <ErrorText error={usage.error} />
      {usage.data && (
        <>
          <UsageChart days={usage.data.by_day} title="Workspace spend and tokens per day" />
          <TableScroll label="Workspace usage by key table">
            <TotalsTable
              caption="Workspace usage by key"
              first="Key"
              rows={usage.data.by_key.map((k) => ({ ...k, label: `${k.name || k.prefix || "(deleted key)"}${k.owner_email ? ` (${k.owner_email})` : ""}` }))}
            />
          </TableScroll>
          <TableScroll label="Workspace usage by member table">
            <TotalsTable
              caption="Workspace usage by member"
              first="Member"
              csv="workspace-usage-by-member-30d.csv"
              rows={usage.data.by_member.map((m) => ({ ...m, label: m.email ?? m.account_id }))}
            />
          </TableScroll>
          <TableScroll label="Workspace usage by tag table">
            <TagTable caption="Workspace usage by tag" rows={usage.data.by_tag} />
          </TableScroll>
        </>
      )}
    </section>
  );
}

function Invites(props: { base: string; owner: boolean }) {
  const list = useLoad(() => api<{ data: Invite[] }>("GET", `${props.base}/invites`), [props.base]);
  const [role, setRole] = useState<"member" | "admin">("member");
  const [hours, setHours] = useState("168");
  const [link, setLink] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function create(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const created = await api<{ url: string }>("POST", `${props.base}/invites`, { role, expires_in_hours: Number(hours) });
      setLink(`${window.location.origin}${created.url}`);
      list.reload();
    } catch (err) {
      setError(err);
    }
  }

  async function withdraw(id: string) {
    setError(null);
    try {
      await api("DELETE", `${props.base}/invites/${encodeURIComponent(id)}`);
      list.reload();
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section aria-labelledby="invites-title">
      <h2 id="invites-title">Invites</h2>
      <form className="inline-form" onSubmit={(event) => void create(event)} aria-label="Create an invite">
        <label>
          Role
          <select name="invite_role" value={role} onChange={(e) => setRole(e.target.value === "admin" ? "admin" : "member")}>
            <option value="member">member</option>
            {props.owner && <option value="admin">admin</option>}
          </select>
        </label>
        <label>
          Valid for (hours)
          <input name="expires_in_hours" inputMode="numeric" value={hours} onChange={(e) => setHours(e.target.value)} />
        </label>
        <button type="submit" className="primary">
          Create invite link
        </button>
      </form>
      <ErrorText error={error ?? list.error} />
      {link && (
        <p className="new-key">
          Send this single-use link to the person you invite:{" "}
          <code className="wrap" data-testid="invite-link">
            {link}
          </code>
        </p>
      )}
      <TableScroll label="Invites table">
        <table>
          <caption>Invites</caption>
          <thead>
            <tr>
              <th scope="col">Role</th>
              <th scope="col">State</th>
              <th scope="col">Expires</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.data.map((i) => (
              <tr key={i.id}>
                <td>{i.role}</td>
                <td>{i.state}</td>
                <td>{formatDate(i.expires_at)}</td>
                <td>
                  {i.state === "pending" && (
                    <button type="button" onClick={() => void withdraw(i.id)}>
                      Withdraw invite
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}
