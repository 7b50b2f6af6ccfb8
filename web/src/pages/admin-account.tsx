// Administrators: one account. Its tier, monthly budgets and own rate and concurrency limits (set and
// cleared); a credit or debit with a required reason (a ledger row with the reason as its note); its
// provider keys (added write-only: only the last four characters are ever shown); its latest ledger
// rows and audit entries. Every change is audited and takes effect at the gateway at once.
import { useState, type FormEvent, type ReactNode } from "react";
import { api, type AdminAccount, type KeyLimits, type LedgerRow, type LimitSet, type PasswordLink } from "../api";
import { modelLimitsText, parseModelLimits } from "./key-traffic";
import { ErrorText, formatCount, formatDate, formatMoney, Link, Notice, TableScroll, useAction, useLoad } from "../components";
import { AuditTable, type AuditRow } from "./admin";
import { BalanceForm, type Run } from "./admin-balance-form";
import { PasswordLinkPanel } from "./password-link-panel";
import { AddProviderKeyForm } from "./add-provider-key-form";

interface ProviderKey {
  id: string;
  provider: string;
  label: string;
  last4: string;
  created_at: string;
}

export function AdminAccountPage(props: { id: string; me: { id: string } }) {
  const path = `/admin/accounts/${encodeURIComponent(props.id)}`;
  const detail = useLoad(() => api<{ account: AdminAccount; tiers: string[] }>("GET", path), [path]);
  const keys = useLoad(() => api<{ data: ProviderKey[]; providers: string[] }>("GET", `${path}/provider-keys`), [path]);
  const ledger = useLoad(() => api<{ data: LedgerRow[] }>("GET", `${path}/ledger?limit=20`), [path]);
  const audit = useLoad(() => api<{ data: AuditRow[] }>("GET", `/admin/audit?limit=50&target_id=${encodeURIComponent(props.id)}`), [props.id]);
  const { error, status, run } = useAction(() => {
    detail.reload();
    keys.reload();
    ledger.reload();
    audit.reload();
  });
  const account = detail.data?.account;
  const [link, setLink] = useState<PasswordLink | null>(null);
  const issueLink = (email: string) =>
    run(async () => setLink(await api<PasswordLink>("POST", `${path}/password-link`)), `A new set-password link for ${email} is below; earlier links stop working.`);

  return (
    <section aria-labelledby="account-title">
      <p>
        <Link to="/admin">← All accounts</Link>
      </p>
      <h1 id="account-title">{account ? account.email : "Account"}</h1>
      <ErrorText error={detail.error} />
      {status && <Notice>{status}</Notice>}
      <ErrorText error={error} />
      {account && detail.data && (
        <>
          <dl className="cards">
            <Card title="Balance" testId="admin-balance">
              {formatMoney(account.balance_usd)}
            </Card>
            <Card title="Reserved in flight">{formatMoney(account.held_usd)}</Card>
            <Card title="Spent in total">{formatMoney(account.total_spent_usd)}</Card>
            <Card title="Status">{account.status}</Card>
            <Card title="Tier">{account.tier}</Card>
            <Card title="Sign-in" testId="admin-sign-in">
              {account.password_set ? "password set" : "no password yet"}
            </Card>
            <Card title="Monthly budget">
              {account.monthly_budget_usd === null ? "none" : formatMoney(account.monthly_budget_usd)}
              {account.monthly_token_budget !== null && `, ${formatCount(account.monthly_token_budget)} tokens`}
            </Card>
          </dl>
          <p className="hint">
            Account id <code>{account.id}</code>, created {formatDate(account.created_at)}.
          </p>
          {account.id !== props.me.id && (
            <div className="actions">
              <button type="button" onClick={() => void issueLink(account.email)}>
                {account.password_set ? "Issue a password reset link" : "Issue a set-password link"}
              </button>
            </div>
          )}
          {link && <PasswordLinkPanel email={account.email} link={link} onDismiss={() => setLink(null)} />}
          <BalanceForm run={run} path={path} email={account.email} balance={account.balance_usd} />
          <SettingsForm
            key={`settings-${account.tier}-${account.monthly_budget_usd}-${account.monthly_token_budget}`}
            account={account}
            tiers={detail.data.tiers}
            run={run}
            path={path}
          />
          <LimitsForm key={`limits-${JSON.stringify(account.limits ?? null)}`} limits={account.limits ?? null} run={run} path={path} />
        </>
      )}
      <ProviderKeys path={path} data={keys.data} error={keys.error} run={run} />
      <h2 id="account-ledger-title">Latest ledger rows</h2>
      <ErrorText error={ledger.error} />
      <TableScroll label="Account ledger">
        <table>
          <caption>The account&apos;s latest 20 ledger rows, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Kind</th>
              <th scope="col">Model</th>
              <th scope="col" className="num">
                Amount
              </th>
              <th scope="col">Note</th>
            </tr>
          </thead>
          <tbody>
            {ledger.data?.data.length === 0 && (
              <tr>
                <td colSpan={5}>No ledger rows.</td>
              </tr>
            )}
            {ledger.data?.data.map((row) => (
              <tr key={row.id}>
                <td>{formatDate(row.created_at)}</td>
                <td>{row.kind}</td>
                <td>{row.model ?? "—"}</td>
                <td className="num">{formatMoney(row.cost_usd)}</td>
                <td>{row.note ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <h2>Audit log of this account</h2>
      <ErrorText error={audit.error} />
      <AuditTable rows={audit.data?.data ?? []} caption="Changes to this account, newest first" />
    </section>
  );
}

function Card(props: { title: string; children: ReactNode; testId?: string }) {
  return (
    <div>
      <dt>{props.title}</dt>
      <dd data-testid={props.testId}>{props.children}</dd>
    </div>
  );
}

function SettingsForm(props: { account: AdminAccount; tiers: string[]; run: Run; path: string }) {
  const [tier, setTier] = useState(props.account.tier);
  const [budget, setBudget] = useState(props.account.monthly_budget_usd ?? "");
  const [tokens, setTokens] = useState(props.account.monthly_token_budget === null ? "" : String(props.account.monthly_token_budget));
  const tiers = props.tiers.includes(props.account.tier) ? props.tiers : [props.account.tier, ...props.tiers];

  async function submit(event: FormEvent) {
    event.preventDefault();
    const body = {
      tier,
      monthly_budget_usd: budget.trim() === "" ? null : budget.trim(),
      monthly_token_budget: tokens.trim() === "" ? null : Number(tokens.trim()),
    };
    await props.run(() => api("PATCH", props.path, body), "Tier and budgets saved.");
  }

  return (
    <form onSubmit={(event) => void submit(event)} aria-labelledby="settings-form-title">
      <h2 id="settings-form-title">Tier and monthly budgets</h2>
      <label>
        Tier
        <select name="tier" value={tier} onChange={(e) => setTier(e.target.value)}>
          {tiers.map((t) => (
            <option key={t} value={t}>
              {t}
            </option>
          ))}
        </select>
      </label>
      <label>
        Monthly budget (USD, empty for none)
        <input name="monthly_budget_usd" inputMode="decimal" maxLength={20} value={budget} onChange={(e) => setBudget(e.target.value)} />
      </label>
      <label>
        Monthly token budget (empty for none)
        <input name="monthly_token_budget" inputMode="numeric" maxLength={16} value={tokens} onChange={(e) => setTokens(e.target.value)} />
      </label>
      <button type="submit" className="primary">
        Save tier and budgets
      </button>
    </form>
  );
}

const LIMIT_FIELDS: Array<[keyof LimitSet, string]> = [
  ["requests_per_minute", "Requests per minute"],
  ["tokens_per_minute", "Tokens per minute"],
  ["concurrent_requests", "Concurrent requests"],
];

/** The account's own rate and concurrency limits (docs/billing.md); per-model ones as on a key's Caps form. */
function LimitsForm(props: { limits: KeyLimits | null; run: Run; path: string }) {
  const [values, setValues] = useState<Record<string, string>>(() =>
    Object.fromEntries(LIMIT_FIELDS.map(([name]) => [name, props.limits?.[name] === undefined ? "" : String(props.limits[name])])),
  );
  const [models, setModels] = useState(modelLimitsText(props.limits?.models));
  const [problem, setProblem] = useState<string | null>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setProblem(null);
    const limits: Record<string, unknown> = {};
    for (const [name] of LIMIT_FIELDS) if (values[name]!.trim() !== "") limits[name] = Number(values[name]!.trim());
    try {
      const perModel = parseModelLimits(models);
      if (perModel) limits.models = perModel;
    } catch (error) {
      setProblem((error as Error).message);
      return;
    }
    await props.run(() => api("PATCH", props.path, { limits: Object.keys(limits).length === 0 ? null : limits }), "Limits saved.");
  }

  return (
    <form onSubmit={(event) => void submit(event)} aria-labelledby="limits-form-title">
      <h2 id="limits-form-title">Rate and concurrency limits</h2>
      <p className="hint">{props.limits === null ? "None of its own: the tier's limits apply." : `Own limits: ${JSON.stringify(props.limits)}.`} Empty fields set no such limit.</p>
      {LIMIT_FIELDS.map(([name, label]) => (
        <label key={name}>
          {label}
          <input name={name} inputMode="numeric" maxLength={12} value={values[name]} onChange={(e) => setValues({ ...values, [name]: e.target.value })} />
        </label>
      ))}
      <label>
        Per-model limits (one model a line: <code>model rpm=N tpm=N concurrent=N</code>)
        <textarea name="models" maxLength={20000} value={models} onChange={(e) => setModels(e.target.value)} placeholder="none" />
      </label>
      {problem && (
        <p className="error" role="alert">
          {problem}
        </p>
      )}
      <div className="actions">
        <button type="submit" className="primary">
          Save limits
        </button>
        <button
          type="button"
          disabled={props.limits === null}
          onClick={() => void props.run(() => api("PATCH", props.path, { limits: null }), "Limits cleared; the tier's apply.")}
        >
          Clear limits
        </button>
      </div>
    </form>
  );
}

function ProviderKeys(props: { path: string; data: { data: ProviderKey[]; providers: string[] } | null; error: unknown; run: Run }) {
  const [confirming, setConfirming] = useState<string | null>(null);
  const providers = props.data?.providers ?? [];

  return (
    <section aria-labelledby="provider-keys-title">
      <h2 id="provider-keys-title">Provider keys</h2>
      <p className="hint">The account&apos;s own upstream keys. A key is shown only by its last four characters once added.</p>
      <ErrorText error={props.error} />
      <TableScroll label="Provider keys table">
        <table>
          <caption>Provider keys of this account</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Label</th>
              <th scope="col">Key</th>
              <th scope="col">Added</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {props.data?.data.length === 0 && (
              <tr>
                <td colSpan={5}>No provider keys.</td>
              </tr>
            )}
            {props.data?.data.map((k) => {
              const name = `${k.provider} key …${k.last4}`;
              return (
                <tr key={k.id}>
                  <th scope="row">{k.provider}</th>
                  <td>{k.label || "—"}</td>
                  <td>
                    <code>…{k.last4}</code>
                  </td>
                  <td>{formatDate(k.created_at)}</td>
                  <td className="actions">
                    {confirming === k.id ? (
                      <>
                        <button
                          type="button"
                          className="danger"
                          onClick={() => void props.run(() => api("DELETE", `${props.path}/provider-keys/${encodeURIComponent(k.id)}`), `Removed the ${name}.`)}
                        >
                          Yes, remove {name}
                        </button>
                        <button type="button" onClick={() => setConfirming(null)}>
                          Cancel
                        </button>
                      </>
                    ) : (
                      <button type="button" className="danger" onClick={() => setConfirming(k.id)}>
                        Remove {name}
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
      <AddProviderKeyForm providers={providers} url={`${props.path}/provider-keys`} run={props.run} label="Add a provider key" />
    </section>
  );
}
