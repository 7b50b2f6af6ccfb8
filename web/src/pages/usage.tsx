// Usage: balance and this month's budget, spend and tokens by day, by key, by model; the ledger.
import { useState } from "react";
import { api, type Totals, type UsageSummary } from "../api";
import { TotalsTable, UsageChart } from "../chart";
import { ErrorText, formatDate, useLoad } from "../components";

interface Balance {
  balance_usd: string;
  held_usd: string;
  total_spent_usd: string;
  monthly_budget_usd: string | null;
  month: string;
  month_spent_usd: string;
  month_requests: number;
}

interface LedgerRow {
  id: string;
  created_at: string;
  kind: string;
  key_name: string | null;
  key_id: string | null;
  model: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: string;
}

export function UsagePage() {
  const [days, setDays] = useState(30);
  const usage = useLoad(() => api<UsageSummary & { balance: Balance }>("GET", `/usage?days=${days}`), [days]);
  const u = usage.data;
  return (
    <section aria-labelledby="usage-title">
      <h1 id="usage-title">Usage</h1>
      <ErrorText error={usage.error} />
      {u && (
        <>
          <dl className="cards">
            <div>
              <dt>Balance</dt>
              <dd data-testid="balance">${u.balance.balance_usd}</dd>
            </div>
            <div>
              <dt>Reserved by requests in flight</dt>
              <dd>${u.balance.held_usd}</dd>
            </div>
            <div>
              <dt>Spent in {u.balance.month}</dt>
              <dd>
                ${u.balance.month_spent_usd}
                {u.balance.monthly_budget_usd && ` of $${u.balance.monthly_budget_usd}`}
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
          <TotalsTable
            caption="By key"
            first="Key"
            rows={u.by_key.map((k) => ({ ...k, label: k.name || k.prefix || (k.status === "deleted" ? "(deleted key)" : (k.key_id ?? "—")) }))}
          />
          <TotalsTable caption="By model" first="Model" rows={u.by_model.map((m) => ({ ...m, label: m.model }))} />
          <CacheTable
            caption="Prompt caching, per key"
            first="Key"
            rows={u.by_key.map((k) => ({ ...k, label: k.name || k.prefix || (k.status === "deleted" ? "(deleted key)" : (k.key_id ?? "—")) }))}
          />
          <CacheTable caption="Prompt caching, per model" first="Model" rows={u.by_model.map((m) => ({ ...m, label: m.model }))} />
        </>
      )}
      <Ledger />
    </section>
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
            <td>{r.cache.read_cost_usd}</td>
            <td>{r.cache.write_tokens}</td>
            <td>{r.cache.write_cost_usd}</td>
            <td>{r.cache.hit_ratio === null ? "—" : `${(Number(r.cache.hit_ratio) * 100).toFixed(1)}%`}</td>
            <td>{r.cache.saving_usd}</td>
            <td>{r.reasoning_tokens}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Ledger() {
  // A stack of cursors: the top one is the page shown; "Newer" pops, "Older" pushes.
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  const page = useLoad(() => api<{ data: LedgerRow[]; next_before: string | null }>("GET", `/ledger?limit=20${cursor ? `&before=${cursor}` : ""}`), [cursor]);
  return (
    <section aria-labelledby="ledger-title">
      <h2 id="ledger-title">Ledger</h2>
      <p>
        <a href="/dashboard/api/ledger.csv" download>
          Download the ledger as CSV
        </a>
      </p>
      <ErrorText error={page.error} />
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
          </tr>
        </thead>
        <tbody>
          {page.data?.data.length === 0 && (
            <tr>
              <td colSpan={7}>No ledger rows.</td>
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
              <td>{row.cost_usd}</td>
            </tr>
          ))}
        </tbody>
      </table>
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
