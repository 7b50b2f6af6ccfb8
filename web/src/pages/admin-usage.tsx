// Administrators: usage across all accounts over a period, by account, model, provider, workspace and tag.
import { useState, type ReactNode } from "react";
import { api, type TagUsage, type Totals } from "../api";
import { TagTable } from "../chart";
import { ErrorText, formatCount, formatMoney, Link, TableScroll, useLoad } from "../components";

interface AllUsage {
  days: number;
  totals: Totals;
  by_account: Array<Totals & { account_id: string; email: string | null }>;
  by_model: Array<Totals & { model: string }>;
  by_provider: Array<Totals & { provider: string }>;
  by_workspace: Array<Totals & { workspace_id: string | null; name: string | null }>;
  by_tag: TagUsage[];
}

export function AdminUsagePage() {
  const [days, setDays] = useState(30);
  const usage = useLoad(() => api<AllUsage>("GET", `/admin/usage?days=${days}`), [days]);
  const u = usage.data;
  return (
    <section aria-labelledby="all-usage-title">
      <h1 id="all-usage-title">Usage across all accounts</h1>
      <label className="period">
        Period
        <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
          <option value={1}>today</option>
          <option value={7}>7 days</option>
          <option value={30}>30 days</option>
          <option value={90}>90 days</option>
        </select>
      </label>
      <ErrorText error={usage.error} />
      {u && (
        <>
          <dl className="cards">
            <div>
              <dt>Spend</dt>
              <dd data-testid="all-spend">{formatMoney(u.totals.cost_usd)}</dd>
            </div>
            <div>
              <dt>Requests</dt>
              <dd data-testid="all-requests">{formatCount(u.totals.requests)}</dd>
            </div>
            <div>
              <dt>Tokens</dt>
              <dd>{formatCount(u.totals.tokens)}</dd>
            </div>
            <div>
              <dt>Accounts with usage</dt>
              <dd>{formatCount(u.by_account.length)}</dd>
            </div>
          </dl>
          <UsageTable
            caption="By account"
            first="Account"
            rows={u.by_account.map((r) => ({ ...r, key: r.account_id, label: <Link to={`/admin/accounts/${encodeURIComponent(r.account_id)}`}>{r.email ?? r.account_id}</Link> }))}
          />
          <UsageTable caption="By model" first="Model" rows={u.by_model.map((r) => ({ ...r, key: r.model, label: r.model }))} />
          <UsageTable caption="By provider" first="Provider" rows={u.by_provider.map((r) => ({ ...r, key: r.provider, label: r.provider }))} />
          <UsageTable
            caption="By workspace"
            first="Workspace"
            rows={u.by_workspace.map((r) => ({
              ...r,
              key: r.workspace_id ?? "",
              label: r.workspace_id === null ? "(no workspace)" : <Link to={`/workspaces/${encodeURIComponent(r.workspace_id)}`}>{r.name ?? r.workspace_id}</Link>,
            }))}
          />
          <TableScroll label="By tag table">
            <TagTable caption="By tag" rows={u.by_tag} />
          </TableScroll>
        </>
      )}
    </section>
  );
}

function UsageTable(props: { caption: string; first: string; rows: Array<Totals & { key: string; label: ReactNode }> }) {
  return (
    <TableScroll label={`${props.caption} table`}>
      <table>
        <caption>{props.caption}</caption>
        <thead>
          <tr>
            <th scope="col">{props.first}</th>
            <th scope="col" className="num">
              Requests
            </th>
            <th scope="col" className="num">
              Input tokens
            </th>
            <th scope="col" className="num">
              Output tokens
            </th>
            <th scope="col" className="num">
              Spend
            </th>
          </tr>
        </thead>
        <tbody>
          {props.rows.length === 0 && (
            <tr>
              <td colSpan={5}>No usage in this period.</td>
            </tr>
          )}
          {props.rows.map((r) => (
            <tr key={r.key}>
              <th scope="row">{r.label}</th>
              <td className="num">{formatCount(r.requests)}</td>
              <td className="num">{formatCount(r.input_tokens)}</td>
              <td className="num">{formatCount(r.output_tokens)}</td>
              <td className="num">{formatMoney(r.cost_usd)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  );
}
