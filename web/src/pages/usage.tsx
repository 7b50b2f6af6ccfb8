// Usage: balance and this month's budget, spend and tokens by day, by key, by model; the ledger; and
// redeeming a top-up code (docs/dashboard.md, "Redeeming a code") and card top-ups when configured.
import { useState, type FormEvent } from "react";
import { api, type LedgerRow, type Totals, type UsageSummary } from "../api";
import { TagTable, TotalsTable, UsageChart } from "../chart";
import { ErrorText, formatDate, formatMoney, Money, Notice, TableScroll, useLoad } from "../components";
import { TopupForm } from "./topup-form";

interface Balance {
  balance_usd: string;
  held_usd: string;
  total_spent_usd: string;
  monthly_budget_usd: string | null;
  month: string;
  month_spent_usd: string;
  month_requests: number;
}

export function UsagePage() {
  const [days, setDays] = useState(30);
  // Bumped by a redemption: the balance and the ledger load again.
  const [round, setRound] = useState(0);
  const usage = useLoad(() => api<UsageSummary & { balance: Balance }>("GET", `/usage?days=${days}`), [days, round]);
  const u = usage.data;
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <TopupForm />
      <RedeemForm onRedeemed={() => setRound((r) => r + 1)} />
      <ErrorText error={usage.error} />
      {u && (
        <>
          <dl className="cards">
            <div>
              <dt>Balance</dt>
              <dd>
                <Money usd={u.balance.balance_usd} testId="balance" />
              </dd>
            </div>
            <div>
              <dt>Reserved by requests in flight</dt>
              <dd>
                <Money usd={u.balance.held_usd} />
              </dd>
            </div>
            <div>
              <dt>Spent in {u.balance.month}</dt>
              <dd>
                <Money usd={u.balance.month_spent_usd} />
                {u.balance.monthly_budget_usd && (
                  <>
                    {" of "}
                    <Money usd={u.balance.monthly_budget_usd} />
                  </>
                )}
              </dd>
            </div>
            <div>
              <dt>Requests ({days} days)</dt>
              <dd data-testid="requests">{u.totals.requests}</dd>
            </div>
            <div>
              <dt>Tokens ({days} days)</dt>
              <dd>{u.totals.tokens}</dd>
            </div>
          </dl>
          <label className="period">
            Period
            <select value={days} onChange={(e) => setDays(Number(e.target.value))}>
              <option value={7}>7 days</option>
              <option value={30}>30 days</option>
              <option value={90}>90 days</option>
            </select>
          </label>
          <UsageChart days={u.by_day} title={`Spend and tokens per day, last ${days} days`} />
          {/* Each table scrolls sideways on a narrow screen rather than widening the page. */}
          <TableScroll label="By key table">
            <TotalsTable
              caption="By key"
              first="Key"
              csv={`usage-by-key-${days}d.csv`}
              rows={u.by_key.map((k) => ({ ...k, label: k.name || k.prefix || (k.status === "deleted" ? "(deleted key)" : (k.key_id ?? "—")) }))}
            />
          </TableScroll>
          <TableScroll label="By model table">
            <TotalsTable caption="By model" first="Model" csv={`usage-by-model-${days}d.csv`} rows={u.by_model.map((m) => ({ ...m, label: m.model }))} />
          </TableScroll>
          <TableScroll label="By workspace table">
            <TotalsTable
              caption="By workspace"
              first="Workspace"
              csv={`usage-by-workspace-${days}d.csv`}
              rows={u.by_workspace.map((w) => ({ ...w, label: w.workspace_id === null ? "(no workspace)" : (w.name ?? w.workspace_id) }))}
            />
          </TableScroll>
          <TableScroll label="By tag table">
            <TagTable caption="By tag" csv={`usage-by-tag-${days}d.csv`} rows={u.by_tag} />
          </TableScroll>
          <TableScroll label="Prompt caching per key table">
            <CacheTable
              caption="Prompt caching, per key"
              first="Key"
              rows={u.by_key.map((k) => ({ ...k, label: k.name || k.prefix || (k.status === "deleted" ? "(deleted key)" : (k.key_id ?? "—")) }))}
            />
          </TableScroll>
          <TableScroll label="Prompt caching per model table">
            <CacheTable caption="Prompt caching, per model" first="Model" rows={u.by_model.map((m) => ({ ...m, label: m.model }))} />
          </TableScroll>
        </>
      )}
      <Ledger round={round} />
    </section>
  );
}

/** A top-up code: credited to this account's balance at once, once. */
function RedeemForm(props: { onRedeemed: () => void }) {
  const [code, setCode] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const result = await api<{ credited_usd: string; account: { balance_usd: string } }>("POST", "/redeem", { code });
      setDone(`${formatMoney(result.credited_usd)} added; your balance is now ${formatMoney(result.account.balance_usd)}.`);
      setCode("");
      props.onRedeemed();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} aria-label="Redeem a code">
      <label>
        Top-up code
        <input
          name="code"
          value={code}
          maxLength={80}
          autoComplete="off"
          spellCheck={false}
          placeholder="MGW-XXXXX-XXXXX-XXXXX-XXXXX-XXXXX"
          onChange={(e) => setCode(e.target.value)}
        />
      </label>
      <button type="submit" className="primary" disabled={busy || code.trim() === ""}>
        Redeem
      </button>
      {done && <Notice>{done}</Notice>}
      <ErrorText error={error} />
    </form>
  );
}

/** Cache reads and writes with their spend, the hit ratio and what caching saved against uncached input prices. */
function CacheTable(props: { caption: string; first: string; rows: Array<Totals & { label: string }> }) {
  return (
    <table data-testid="cache-table">
      <caption>{props.caption}</caption>
      <thead>
        <tr>
          <th scope="col">{props.first}</th>
          <th scope="col">Cache reads (tokens)</th>
          <th scope="col">Read spend (USD)</th>
          <th scope="col">Cache writes (tokens)</th>
          <th scope="col">Write spend (USD)</th>
          <th scope="col">Hit ratio</th>
          <th scope="col">Saved (USD)</th>
          <th scope="col">Reasoning tokens</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.length === 0 && (
          <tr>
            <td colSpan={8}>No usage in this period.</td>
          </tr>
        )}
        {props.rows.map((r) => (
          <tr key={r.label}>
            <th scope="row">{r.label}</th>
            <td>{r.cache.read_tokens}</td>
            <td className="num">
              <Money usd={r.cache.read_cost_usd} />
            </td>
            <td>{r.cache.write_tokens}</td>
            <td className="num">
              <Money usd={r.cache.write_cost_usd} />
            </td>
            <td>{r.cache.hit_ratio === null ? "—" : `${(Number(r.cache.hit_ratio) * 100).toFixed(1)}%`}</td>
            <td className="num">
              <Money usd={r.cache.saving_usd} />
            </td>
            <td>{r.reasoning_tokens}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Ledger(props: { round: number }) {
  // A stack of cursors: the top one is the page shown; "Newer" pops, "Older" pushes.
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  const page = useLoad(() => api<{ data: LedgerRow[]; next_before: string | null }>("GET", `/ledger?limit=20${cursor ? `&before=${cursor}` : ""}`), [cursor, props.round]);
  return (
    <section aria-labelledby="ledger-title">
      <h2 id="ledger-title">Ledger</h2>
      <p>
        <a href="/dashboard/api/ledger.csv" download>
          Download the ledger as CSV
        </a>
      </p>
      <ErrorText error={page.error} />
      <TableScroll label="Ledger rows, newest first">
        <table>
          <caption>Ledger rows, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Kind</th>
              <th scope="col">Key</th>
              <th scope="col">Model</th>
              <th scope="col">Input</th>
              <th scope="col">Output</th>
              <th scope="col">USD</th>
              <th scope="col">Note</th>
            </tr>
          </thead>
          <tbody>
            {page.data?.data.length === 0 && (
              <tr>
                <td colSpan={8}>No ledger rows.</td>
              </tr>
            )}
            {page.data?.data.map((row) => (
              <tr key={row.id}>
                <td>{formatDate(row.created_at)}</td>
                <td>{row.kind}</td>
                <td>{row.key_name ?? row.key_id ?? "—"}</td>
                <td>{row.model ?? "—"}</td>
                <td>{row.input_tokens}</td>
                <td>{row.output_tokens}</td>
                <td className="num">
                  <Money usd={row.cost_usd} />
                </td>
                <td>{row.note ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <div className="actions">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <button type="button" disabled={!page.data?.next_before} onClick={() => page.data?.next_before && setCursors([...cursors, page.data.next_before])}>
          Older
        </button>
      </div>
    </section>
  );
}
