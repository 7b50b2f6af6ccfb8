// Keys: create (the raw key is shown once, and again for 5 minutes with the show-again token),
// caps, policies (docs/dashboard.md, "Key policies") and rate limits (a dialog: key-caps-form.tsx),
// revoke, permanent delete, enable.
import { useState, type FormEvent } from "react";
import { api, type Key, type KeyLimits, type Workspace } from "../api";
import { KeyTraffic } from "./key-traffic";
import { CacheSettingSection } from "./cache-setting";
import { capsDraftOf, KeyEditorDialog } from "./key-caps-form";
import { ErrorText, formatDate, formatMoney, Link, Money, Notice, useAction, useLoad } from "../components";
import { BalanceBanner } from "./balance-banner";
import { GettingStarted } from "./getting-started";

interface Created {
  key: Key;
  raw_key: string;
  show_again: { token: string; expires_at: string };
}

export function KeysPage() {
  const keys = useLoad(() => api<{ data: Key[] }>("GET", "/keys"), []);
  const workspaces = useLoad(() => api<{ data: Workspace[] }>("GET", "/workspaces"), []);
  const [created, setCreated] = useState<Created | null>(null);
  const { error, status, run } = useAction(() => keys.reload());

  return (
    <section aria-labelledby="keys-title">
      <h1 id="keys-title">API keys</h1>
      <BalanceBanner />
      <CreateKeyForm workspaces={workspaces.data?.data ?? []} onCreated={(c) => (setCreated(c), keys.reload())} />
      {created && <NewKeyPanel created={created} onDismiss={() => setCreated(null)} />}
      <ErrorText error={error ?? keys.error} />
      {status && <Notice>{status}</Notice>}
      {/* Scrolls sideways on a narrow screen; focusable so a keyboard can scroll it too. */}
      <div className="table-scroll" role="region" aria-label="Your keys" tabIndex={0}>
        <table>
          <caption>Your keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Status</th>
              <th scope="col">Spent / cap</th>
              <th scope="col">Tokens / cap</th>
              <th scope="col">Policy</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.data?.data.length === 0 && (
              <tr>
                <td colSpan={8}>No keys yet.</td>
              </tr>
            )}
            {keys.data?.data.map((key) => (
              <KeyRow key={key.id} item={key} run={(action, done) => void run(action, done)} />
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function CreateKeyForm(props: { workspaces: Workspace[]; onCreated: (c: Created) => void }) {
  const [name, setName] = useState("");
  const [budget, setBudget] = useState("");
  const [tokens, setTokens] = useState("");
  const [workspace, setWorkspace] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = {
        name,
        ...(budget.trim() && { budget_cap_usd: budget.trim() }),
        ...(tokens.trim() && { token_cap: Number(tokens) }),
        ...(workspace && { workspace_id: workspace }),
      };
      props.onCreated(await api<Created>("POST", "/keys", body));
      setName("");
      setBudget("");
      setTokens("");
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} aria-label="Create a key">
      <label>
        Name
        <input name="name" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Budget cap (USD, optional)
        <input name="budget_cap_usd" inputMode="decimal" value={budget} onChange={(e) => setBudget(e.target.value)} />
      </label>
      <label>
        Token cap (optional)
        <input name="token_cap" inputMode="numeric" value={tokens} onChange={(e) => setTokens(e.target.value)} />
      </label>
      <label>
        Workspace
        <select name="workspace_id" value={workspace} onChange={(e) => setWorkspace(e.target.value)}>
          <option value="">None (personal)</option>
          {props.workspaces.map((w) => (
            <option key={w.id} value={w.id}>
              {w.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" className="primary" disabled={busy}>
        Create key
      </button>
      <ErrorText error={error} />
    </form>
  );
}

function NewKeyPanel(props: { created: Created; onDismiss: () => void }) {
  const [raw, setRaw] = useState<string | null>(props.created.raw_key);
  const [error, setError] = useState<unknown>(null);
  const [copied, setCopied] = useState(false);
  const until = new Date(props.created.show_again.expires_at);

  async function copy() {
    if (!raw) return;
    try {
      await navigator.clipboard.writeText(raw);
      setCopied(true);
    } catch {
      setError(new Error("The browser refused clipboard access; select the key and copy it by hand."));
    }
  }

  async function showAgain() {
    setError(null);
    try {
      const shown = await api<{ raw_key: string }>("POST", `/keys/${encodeURIComponent(props.created.key.id)}/show-again`, { token: props.created.show_again.token });
      setRaw(shown.raw_key);
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section className="new-key" aria-labelledby="new-key-title">
      <h2 id="new-key-title">New key “{props.created.key.name || props.created.key.prefix}”</h2>
      {raw ? (
        <>
          <p>Copy this key now. It is shown only here; you can show it again until {until.toLocaleTimeString()}.</p>
          <code className="secret" data-testid="raw-key">
            {raw}
          </code>
          <div className="actions">
            <button type="button" onClick={() => void copy()}>
              {copied ? "Copied" : "Copy key"}
            </button>
            <button type="button" onClick={() => (setRaw(null), setCopied(false))}>
              Hide key
            </button>
          </div>
        </>
      ) : (
        <div className="actions">
          <p>The key is hidden. You can show it again until {until.toLocaleTimeString()}.</p>
          <button type="button" onClick={() => void showAgain()}>
            Show key again
          </button>
        </div>
      )}
      <h3>Getting started</h3>
      <GettingStarted keyId={props.created.key.id} rawKey={raw} />
      <button type="button" className="link" onClick={props.onDismiss}>
        Done
      </button>
      <ErrorText error={error} />
    </section>
  );
}

function KeyRow(props: { item: Key; run: (action: () => Promise<unknown>, done: string) => void }) {
  const key = props.item;
  const label = key.name || key.prefix;
  const path = `/keys/${encodeURIComponent(key.id)}`;
  const [confirming, setConfirming] = useState<"revoke" | "delete" | null>(null);
  const [editing, setEditing] = useState(false);
  const [caps, setCaps] = useState(() => capsDraftOf(key));
  const policy = key.policy;
  const [showingTraffic, setShowingTraffic] = useState(false);
  const [showingCache, setShowingCache] = useState(false);

  return (
    <tr data-key-id={key.id}>
      <td>
        {key.name || <em>unnamed</em>}
        {key.status !== "revoked" && (
          <div className="row-links">
            <Link to={`/keys/${encodeURIComponent(key.id)}/start`}>
              Getting started<span className="sr-only"> with {label}</span>
            </Link>
          </div>
        )}
      </td>
      <td>
        <code>{key.prefix}</code>
      </td>
      <td>
        <span className={`badge ${key.effective_status}`}>{key.effective_status}</span>
      </td>
      <td>
        <Money usd={key.spent_usd} /> / {key.budget_cap_usd === null ? "no cap" : <Money usd={key.budget_cap_usd} />}
      </td>
      <td>
        {key.tokens_used} / {key.token_cap ?? "no cap"}
        {!key.clamp_output && <span className="badge">no clamping</span>}
        {key.limits && <span className="badge">{limitsSummary(key.limits)}</span>}
      </td>
      <td>
        <PolicySummary policy={policy} />
      </td>
      <td>{formatDate(key.created_at)}</td>
      <td className="actions">
        {editing && (
          <KeyEditorDialog
            label={label}
            draft={caps}
            onChange={(change) => setCaps((draft) => ({ ...draft, ...change }))}
            // A refusal throws into the dialog, which stays open; a success is the page's notice (run's no-op action) and a reload.
            save={(body) => api("PATCH", path, body).then(() => props.run(async () => undefined, `Caps, policy and limits of ${label} saved.`))}
            onClose={() => setEditing(false)}
          />
        )}
        {confirming ? (
          <>
            <button
              type="button"
              className="danger"
              onClick={() => {
                setConfirming(null);
                props.run(
                  () => api("DELETE", `${path}?confirm=true${confirming === "delete" ? "&permanent=true" : ""}`),
                  confirming === "delete" ? `Key ${label} deleted permanently.` : `Key ${label} revoked; it no longer works.`,
                );
              }}
            >
              {confirming === "delete" ? `Yes, delete ${label} forever` : `Yes, revoke ${label}`}
            </button>
            <button type="button" onClick={() => setConfirming(null)}>
              Cancel
            </button>
          </>
        ) : (
          <>
            {key.status !== "revoked" && (
              <button type="button" onClick={() => setEditing(true)} aria-label={`Edit caps of ${label}`} aria-haspopup="dialog">
                Edit
              </button>
            )}
            <button type="button" onClick={() => setShowingTraffic(!showingTraffic)} aria-expanded={showingTraffic} aria-label={`Limits in use of ${label}`}>
              Limits
            </button>
            {showingTraffic && <KeyTraffic keyId={key.id} label={label} />}
            <button type="button" onClick={() => setShowingCache(!showingCache)} aria-expanded={showingCache} aria-label={`Response cache of ${label}`}>
              Cache
            </button>
            {showingCache && <CacheSettingSection base={path} label={label} canChange={key.status !== "revoked"} />}
            {key.status === "exhausted" && (
              <button type="button" onClick={() => props.run(() => api("POST", `${path}/enable`, {}), `Key ${label} enabled.`)} aria-label={`Enable ${label}`}>
                Enable
              </button>
            )}
            {key.status !== "revoked" ? (
              <button type="button" className="danger" onClick={() => setConfirming("revoke")} aria-label={`Revoke ${label}`}>
                Revoke
              </button>
            ) : (
              <button type="button" className="danger" onClick={() => setConfirming("delete")} aria-label={`Delete ${label} permanently`}>
                Delete
              </button>
            )}
          </>
        )}
      </td>
    </tr>
  );
}

/** A key's policy in a few words: models, networks, expiry, and the periodic budget's use and reset. */
function PolicySummary(props: { policy: Key["policy"] }) {
  const { policy } = props;
  const parts: string[] = [];
  if (policy.allowed_models) parts.push(`models: ${policy.allowed_models.join(", ")}`);
  if (policy.allowed_networks) parts.push(`networks: ${policy.allowed_networks.join(", ")}`);
  if (policy.allowed_mcp) parts.push(`MCP: ${policy.allowed_mcp.join(", ")}`);
  if (policy.default_tags)
    parts.push(
      `tags: ${Object.entries(policy.default_tags)
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}`,
    );
  if (policy.expires_at) parts.push(`${policy.expired ? "expired" : "expires"} ${formatDate(policy.expires_at)}`);
  const periodic = policy.periodic_budget;
  if (periodic) {
    const limits = [
      periodic.budget_usd && `${formatMoney(periodic.spent_usd)} / ${formatMoney(periodic.budget_usd)}`,
      periodic.token_cap !== null && `${periodic.tokens_used} / ${periodic.token_cap} tokens`,
    ].filter(Boolean);
    parts.push(`per ${periodic.period}: ${limits.join(", ")} (resets ${formatDate(periodic.resets_at)})`);
  }
  if (parts.length === 0) return <span>none</span>;
  return (
    <ul className="policy">
      {parts.map((part) => (
        <li key={part}>{part}</li>
      ))}
    </ul>
  );
}

/** "60 rpm · 100000 tpm · 5 in flight", and how many models have limits of their own. */
function limitsSummary(limits: KeyLimits): string {
  const parts: string[] = [];
  if (limits.requests_per_minute !== undefined) parts.push(`${limits.requests_per_minute} rpm`);
  if (limits.tokens_per_minute !== undefined) parts.push(`${limits.tokens_per_minute} tpm`);
  if (limits.concurrent_requests !== undefined) parts.push(`${limits.concurrent_requests} in flight`);
  const models = Object.keys(limits.models ?? {}).length;
  if (models > 0) parts.push(`${models} model limit${models === 1 ? "" : "s"}`);
  return parts.join(" · ");
}
