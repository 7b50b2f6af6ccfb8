// Administrators: every workspace (team) with its monthly budget, this month's spend, what holds in
// flight reserve and what is left, its member budget and models, and a link to its page, which an
// administrator reads even when not a member (docs/dashboard.md, "Teams").
import { useState } from "react";
import { api, type BudgetUse } from "../api";
import { ErrorText, formatDate, Link, Money, TableScroll, useLoad } from "../components";
import { TagBudgets } from "./admin-tag-budgets";

/** GET /admin/workspaces: a page of every workspace with its budget's use this month. */
interface WorkspaceListPage {
  month: string;
  resets_at: string;
  data: Array<{
    id: string;
    name: string;
    created_at: string;
    members: number;
    allowed_models: string[] | null;
    member_monthly_budget_usd: string | null;
    budget: BudgetUse;
  }>;
  has_more: boolean;
  next_cursor: string | null;
}

function tokenText(use: BudgetUse): string {
  return use.tokens === null ? `${use.tokens_used.toLocaleString("en-US")} used` : `${use.tokens_used.toLocaleString("en-US")} of ${use.tokens.toLocaleString("en-US")}`;
}

export function AdminTeamsPage() {
  const [pages, setPages] = useState<WorkspaceListPage[]>([]);
  const first = useLoad(() => api<WorkspaceListPage>("GET", "/admin/workspaces?limit=100"), []);
  const [error, setError] = useState<unknown>(null);
  const all = first.data ? [first.data, ...pages] : [];
  const last = all.at(-1);
  const teams = all.flatMap((p) => p.data);

  async function more(cursor: string) {
    setError(null);
    try {
      const next = await api<WorkspaceListPage>("GET", `/admin/workspaces?limit=100&cursor=${encodeURIComponent(cursor)}`);
      setPages((done) => [...done, next]);
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section aria-labelledby="teams-title">
      <h1 id="teams-title">Teams</h1>
      <p className="hint">
        Every workspace and its monthly budget{first.data ? ` in ${first.data.month} (resets ${formatDate(first.data.resets_at)})` : ""}. Open a team to see its members' spend and
        models; its owners and admins change its members, and its budgets are set on its page or with the admin API.
      </p>
      <ErrorText error={first.error ?? error} />
      {first.data && (
        <TableScroll label="Teams table">
          <table>
            <caption>Teams</caption>
            <thead>
              <tr>
                <th scope="col">Team</th>
                <th scope="col">Members</th>
                <th scope="col">Budget (USD)</th>
                <th scope="col">Spent (USD)</th>
                <th scope="col">Held (USD)</th>
                <th scope="col">Left (USD)</th>
                <th scope="col">Tokens</th>
                <th scope="col">Per member (USD)</th>
                <th scope="col">Models</th>
              </tr>
            </thead>
            <tbody>
              {teams.length === 0 && (
                <tr>
                  <td colSpan={9}>No workspaces yet.</td>
                </tr>
              )}
              {teams.map((t) => (
                <tr key={t.id} data-testid={`team-${t.id}`}>
                  <th scope="row">
                    <Link to={`/workspaces/${encodeURIComponent(t.id)}`}>{t.name}</Link>
                  </th>
                  <td className="num">{t.members}</td>
                  <td className="num">{t.budget.usd === null ? "no limit" : <Money usd={t.budget.usd} />}</td>
                  <td className="num">
                    <Money usd={t.budget.spent_usd} />
                  </td>
                  <td className="num">
                    <Money usd={t.budget.held_usd} />
                  </td>
                  <td className="num">{t.budget.remaining_usd === null ? "—" : <Money usd={t.budget.remaining_usd} />}</td>
                  <td className="num">{tokenText(t.budget)}</td>
                  <td className="num">{t.member_monthly_budget_usd === null ? "no limit" : <Money usd={t.member_monthly_budget_usd} />}</td>
                  <td>{t.allowed_models === null ? "all of the tier" : t.allowed_models.join(", ")}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      {last?.next_cursor && (
        <button type="button" onClick={() => void more(last.next_cursor!)}>
          Show more teams
        </button>
      )}
      <TagBudgets />
    </section>
  );
}
