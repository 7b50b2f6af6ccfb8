// A set-password link (/dashboard/set-password#<token>): an administrator's invitation or password
// reset. The token stays in the URL fragment, which never reaches a server log. The page says which
// account the link is for, takes the new password twice, and signs the person in; a used, expired or
// replaced link is refused with the same message whatever the reason.
import { useEffect, useState, type FormEvent } from "react";
import { api, type SessionInfo } from "../api";
import { ErrorText } from "../components";

interface LinkInfo {
  email: string;
  purpose: "setup" | "reset";
  expires_at: string;
}

export function SetPasswordPage(props: { onSignedIn: (s: SessionInfo) => void }) {
  const token = window.location.hash.slice(1);
  const [info, setInfo] = useState<LinkInfo | null>(null);
  const [checkError, setCheckError] = useState<unknown>(null);
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!token) return;
    api<LinkInfo>("POST", "/set-password/check", { token }).then(setInfo, setCheckError);
  }, [token]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (password !== again) {
      setError(new Error("The two passwords differ; type the same password twice."));
      return;
    }
    setBusy(true);
    setError(null);
    try {
      props.onSignedIn(await api<SessionInfo>("POST", "/set-password", { token, password }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return (
    <main className="narrow">
      <h1>Model Gateway</h1>
      {!token && <p role="alert">This link is incomplete: copy the whole link you were sent, including the part after #.</p>}
      <ErrorText error={checkError} />
      {info && (
        <form onSubmit={(event) => void submit(event)} aria-labelledby="set-password-title">
          <h2 id="set-password-title">{info.purpose === "setup" ? "Set your password" : "Choose a new password"}</h2>
          <p>
            For <strong>{info.email}</strong>. {info.purpose === "reset" && "Every place you are signed in is signed out. "}This link works once, until{" "}
            {new Date(info.expires_at).toLocaleString()}.
          </p>
          {/* For password managers: the account this password belongs to. */}
          <input type="hidden" name="email" autoComplete="username" value={info.email} />
          <label>
            New password
            <input
              type="password"
              name="password"
              autoComplete="new-password"
              required
              minLength={8}
              maxLength={200}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </label>
          <label>
            New password again
            <input
              type="password"
              name="password-again"
              autoComplete="new-password"
              required
              minLength={8}
              maxLength={200}
              value={again}
              onChange={(e) => setAgain(e.target.value)}
            />
          </label>
          <p className="hint">At least 8 characters.</p>
          <ErrorText error={error} />
          <button type="submit" className="primary" disabled={busy}>
            Set password and sign in
          </button>
        </form>
      )}
    </main>
  );
}
