// The signed-in person's own account: who they are, and changing the password (the current one is
// required). A change signs out every other browser; this one continues with a fresh session.
import { useState, type FormEvent } from "react";
import { api, type SessionInfo } from "../api";
import { ErrorText, formatDate, Notice } from "../components";

export function AccountPage(props: { session: SessionInfo; onSession: (s: SessionInfo) => void }) {
  const me = props.session.account;
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [again, setAgain] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setStatus(null);
    if (next !== again) {
      setError(new Error("The two new passwords differ; type the same password twice."));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const session = await api<SessionInfo>("POST", "/account/password", { current_password: current, new_password: next });
      props.onSession(session);
      setCurrent("");
      setNext("");
      setAgain("");
      setStatus("Password changed. Every other browser where you were signed in is signed out.");
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="me-title" className="narrow">
      <h1 id="me-title">Your account</h1>
      <dl className="facts">
        <dt>Email</dt>
        <dd>{me.email}</dd>
        <dt>Role</dt>
        <dd>{me.is_admin ? "administrator" : "member"}</dd>
        <dt>Created</dt>
        <dd>{formatDate(me.created_at)}</dd>
      </dl>
      <form onSubmit={(event) => void submit(event)} aria-labelledby="change-password-title">
        <h2 id="change-password-title">Change password</h2>
        <input type="hidden" name="email" autoComplete="username" value={me.email} />
        <label>
          Current password
          <input type="password" name="current-password" autoComplete="current-password" required maxLength={200} value={current} onChange={(e) => setCurrent(e.target.value)} />
        </label>
        <label>
          New password
          <input type="password" name="new-password" autoComplete="new-password" required minLength={8} maxLength={200} value={next} onChange={(e) => setNext(e.target.value)} />
        </label>
        <label>
          New password again
          <input
            type="password"
            name="new-password-again"
            autoComplete="new-password"
            required
            minLength={8}
            maxLength={200}
            value={again}
            onChange={(e) => setAgain(e.target.value)}
          />
        </label>
        <p className="hint">At least 8 characters. Forgot the current one? Sign out and ask an administrator for a password reset link.</p>
        <ErrorText error={error} />
        {status && <Notice>{status}</Notice>}
        <button type="submit" className="primary" disabled={busy}>
          Change password
        </button>
      </form>
    </section>
  );
}
