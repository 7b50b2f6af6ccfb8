// Administrators: the monthly budgets on request tags (docs/billing.md, "Tags and tag budgets"), on the
// Teams page: each with this month's spend, held and what is left, a form that sets one (gateway-wide
// or for one account) and a button that removes one.
import { useState, type FormEvent } from "react";
import { api, type BudgetUse } from "../api";
import { ErrorText, Money, TableScroll, useLoad } from "../components";

interface TagBudget extends BudgetUse {
  tag: string;
  account_id: string | null;
  scope: string;
}

export function TagBudgets() {
  const [round, setRound] = useState(0);
  const list = useLoad(() => api<{ month: string; data: TagBudget[] }>("GET", "/admin/tag-budgets"), [round]);
  const [tag, setTag] = useState("");
  const [account, setAccount] = useState("");
  const [usd, setUsd] = useState("");
  const [tokens, setTokens] = useState("");
  const [error, setError] = useState<unknown>(null);

  async function run(work: () => Promise<unknown>) {
    setError(null);
    try {
      await work();
      setRound((n) => n + 1);
    } catch (err) {
      setError(err);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    void run(async () => {
      await api("POST", "/admin/tag-budgets", {
        tag: tag.trim(),
        ...(account.trim() !== "" && { account_id: account.trim() }),
        ...(usd.trim() !== "" && { monthly_budget_usd: usd.trim() }),
        ...(tokens.trim() !== "" && { monthly_token_budget: Number(tokens) }),
      });
      setTag("");
      setUsd("");
      setTokens("");
    });
  }

  const remove = (b: TagBudget) =>
    run(() => api("DELETE", `/admin/tag-budgets?tag=${encodeURIComponent(b.tag)}${b.account_id === null ? "" : `&account_id=${encodeURIComponent(b.account_id)}`}`));

  return (
    <section aria-labelledby="tag-budgets-title">
      <h2 id="tag-budgets-title">Tag budgets</h2>
      <p className="hint">
        A monthly budget on a request tag (x-gateway-tags or a key&apos;s default tags): gateway-wide, or for one account. A request over it is refused with tag_budget_exceeded.
      </p>
      <ErrorText error={list.error ?? error} />
      {list.data && (
        <TableScroll label="Tag budgets table">
          <table>
            <caption>Tag budgets in {list.data.month}</caption>
            <thead>
              <tr>
                <th scope="col">Tag</th>
                <th scope="col">Account</th>
                <th scope="col">Budget (USD)</th>
                <th scope="col">Spent (USD)</th>
                <th scope="col">Left (USD)</th>
                <th scope="col">Tokens</th>
                <th scope="col">Remove</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.length === 0 && (
                <tr>
                  <td colSpan={7}>No tag budgets yet.</td>
                </tr>
              )}
              {list.data.data.map((b) => (
                <tr key={b.scope} data-testid={`tag-budget-${b.tag}`}>
                  <th scope="row">{b.tag}</th>
                  <td>{b.account_id ?? "every account"}</td>
                  <td className="num">{b.usd === null ? "no limit" : <Money usd={b.usd} />}</td>
                  <td className="num">
                    <Money usd={b.spent_usd} />
                  </td>
                  <td className="num">{b.remaining_usd === null ? "—" : <Money usd={b.remaining_usd} />}</td>
                  <td className="num">{b.tokens === null ? `${b.tokens_used} used` : `${b.tokens_used} of ${b.tokens}`}</td>
                  <td>
                    <button type="button" onClick={() => void remove(b)} aria-label={`Remove the budget on ${b.tag}`}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <form className="inline-form" onSubmit={submit} aria-label="Set a tag budget">
        <label>
          Tag
          <input value={tag} onChange={(e) => setTag(e.target.value)} placeholder="project=atlas" required spellCheck={false} />
        </label>
        <label>
          Account id
          <input value={account} onChange={(e) => setAccount(e.target.value)} placeholder="every account" spellCheck={false} />
        </label>
        <label>
          USD per month
          <input value={usd} onChange={(e) => setUsd(e.target.value)} inputMode="decimal" />
        </label>
        <label>
          Tokens per month
          <input value={tokens} onChange={(e) => setTokens(e.target.value)} inputMode="numeric" />
        </label>
        <button type="submit">Set budget</button>
      </form>
    </section>
  );
}
