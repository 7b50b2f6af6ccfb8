// Administrators: redemption codes (docs/billing.md, "Redemption codes"). Mint a batch (value, count,
// expiry, batch name, optional note): the codes are shown once, here, and never again (only their
// hashes are stored). The list shows each code's state; an unused one can be revoked.
import { useState, type FormEvent } from "react";
import { api } from "../api";
import { ErrorText, formatDate, formatMoney, Notice, TableScroll, useAction, useLoad } from "../components";

interface Code {
  id: string;
  prefix: string;
  value_usd: string;
  batch: string | null;
  note: string | null;
  state: "unused" | "used" | "revoked" | "expired";
  created_by: string | null;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  used_by: string | null;
}

type Minted = Code & { code: string };

const STATES = ["", "unused", "used", "revoked", "expired"] as const;

export function AdminCodesPage() {
  const [state, setState] = useState<(typeof STATES)[number]>("");
  const [minted, setMinted] = useState<Minted[] | null>(null);
  const list = useLoad(() => api<{ data: Code[]; next_cursor: string | null }>("GET", `/admin/codes?limit=200${state ? `&state=${state}` : ""}`), [state]);
  const [confirming, setConfirming] = useState<string | null>(null);
  const { error, status, run } = useAction(() => list.reload());

  return (
    <section aria-labelledby="codes-title">
      <h1 id="codes-title">Redemption codes</h1>
      <p className="hint">Single-use top-up codes: a signed-in user redeems one on the Usage page and its value is added to their balance.</p>
      <MintForm
        onMinted={(codes) => {
          setMinted(codes);
          list.reload();
        }}
      />
      {minted && <MintedPanel codes={minted} onDismiss={() => setMinted(null)} />}
      <ErrorText error={error ?? list.error} />
      {status && <Notice>{status}</Notice>}
      <label className="period">
        Show
        <select value={state} onChange={(e) => setState(e.target.value as (typeof STATES)[number])}>
          {STATES.map((s) => (
            <option key={s} value={s}>
              {s === "" ? "all codes" : `${s} codes`}
            </option>
          ))}
        </select>
      </label>
      <TableScroll label="Codes table">
        <table>
          <caption>Codes, newest first (the latest 200)</caption>
          <thead>
            <tr>
              <th scope="col">Code</th>
              <th scope="col" className="num">
                Value
              </th>
              <th scope="col">State</th>
              <th scope="col">Batch</th>
              <th scope="col">Note</th>
              <th scope="col">Expires</th>
              <th scope="col">Used by</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.data.length === 0 && (
              <tr>
                <td colSpan={8}>No codes.</td>
              </tr>
            )}
            {list.data?.data.map((c) => (
              <tr key={c.id}>
                <th scope="row">
                  <code>{c.prefix}</code>
                </th>
                <td className="num">{formatMoney(c.value_usd)}</td>
                <td>
                  <span className={`badge code-${c.state}`}>{c.state}</span>
                </td>
                <td>{c.batch ?? "—"}</td>
                <td>{c.note ?? "—"}</td>
                <td>{formatDate(c.expires_at)}</td>
                <td>{c.used_by ? `${c.used_by} (${formatDate(c.used_at)})` : "—"}</td>
                <td className="actions">
                  {c.state === "unused" &&
                    (confirming === c.id ? (
                      <>
                        <button
                          type="button"
                          className="danger"
                          onClick={() => void run(() => api("POST", `/admin/codes/${encodeURIComponent(c.id)}/revoke`), `Code ${c.prefix} revoked.`)}
                        >
                          Yes, revoke {c.prefix}
                        </button>
                        <button type="button" onClick={() => setConfirming(null)}>
                          Cancel
                        </button>
                      </>
                    ) : (
                      <button type="button" className="danger" onClick={() => setConfirming(c.id)}>
                        Revoke {c.prefix}
                      </button>
                    ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}

function MintForm(props: { onMinted: (codes: Minted[]) => void }) {
  const [value, setValue] = useState("");
  const [count, setCount] = useState("1");
  const [days, setDays] = useState("90");
  const [batch, setBatch] = useState("");
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = {
        value_usd: value.trim(),
        count: Number(count),
        expires_in_days: Number(days),
        ...(batch.trim() && { batch: batch.trim() }),
        ...(note.trim() && { note: note.trim() }),
      };
      const result = await api<{ data: Minted[] }>("POST", "/admin/codes", body);
      props.onMinted(result.data);
      setValue("");
      setNote("");
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} aria-label="Mint codes">
      <label>
        Value (USD)
        <input name="value_usd" inputMode="decimal" required maxLength={20} value={value} onChange={(e) => setValue(e.target.value)} />
      </label>
      <label>
        How many
        <input name="count" type="number" min={1} max={500} required value={count} onChange={(e) => setCount(e.target.value)} />
      </label>
      <label>
        Expires in (days)
        <input name="expires_in_days" type="number" min={1} max={3650} required value={days} onChange={(e) => setDays(e.target.value)} />
      </label>
      <label>
        Batch (optional)
        <input name="batch" maxLength={100} value={batch} onChange={(e) => setBatch(e.target.value)} />
      </label>
      <label>
        Note (optional)
        <input name="note" maxLength={500} value={note} onChange={(e) => setNote(e.target.value)} />
      </label>
      <button type="submit" className="primary" disabled={busy || value.trim() === ""}>
        Mint codes
      </button>
      <ErrorText error={error} />
    </form>
  );
}

function MintedPanel(props: { codes: Minted[]; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const text = props.codes.map((c) => c.code).join("\n");
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
    } catch {
      setError(new Error("The browser refused clipboard access; select the codes and copy them by hand."));
    }
  }
  const first = props.codes[0];
  return (
    <div className="new-key" role="region" aria-labelledby="minted-title">
      <h2 id="minted-title">
        {props.codes.length} {props.codes.length === 1 ? "code" : "codes"} of {first ? formatMoney(first.value_usd) : ""}: copy {props.codes.length === 1 ? "it" : "them"} now
      </h2>
      <p>This is the only time the codes are shown. They expire {first ? formatDate(first.expires_at) : ""}.</p>
      <code className="secret codes-list" data-testid="minted-codes">
        {text}
      </code>
      <div className="actions">
        <button type="button" onClick={() => void copy()}>
          {copied ? "Copied" : "Copy codes"}
        </button>
        <button type="button" onClick={props.onDismiss}>
          I have stored them; hide the codes
        </button>
      </div>
      <ErrorText error={error} />
    </div>
  );
}
