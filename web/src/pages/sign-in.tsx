// Sign in, or sign up: when server.signup is open, or with a workspace invite when it is invite.
// When it is closed, administrators create people and send them a set-password link.
import { useEffect, useState, type FormEvent } from "react";
import { api, type SessionInfo, type SignupMode } from "../api";
import { ErrorText } from "../components";
import { navigate } from "../router";

interface SignInConfig {
  signup: SignupMode;
  password_sign_in: boolean;
  company_sign_in: { label: string } | null;
}

/** What each refusal of company sign-in (?oidc_error=REASON) means for the person. */
const COMPANY_SIGN_IN_ERRORS: Record<string, string> = {
  oidc_unavailable: "The company sign-in provider cannot be reached; try again later.",
  oidc_state_missing: "The sign-in expired or was started in another browser; start again.",
  oidc_denied: "The company sign-in provider did not let you in.",
  oidc_wrong_audience: "The provider's answer was meant for another application.",
  oidc_wrong_issuer: "The answer came from another provider than the one configured.",
  oidc_token_expired: "The provider's answer has expired; start again.",
  oidc_nonce_mismatch: "The provider's answer belongs to another sign-in; start again.",
  oidc_email_missing: "Your company account has no email address.",
  oidc_email_unverified: "Your company account's email address is not verified.",
  oidc_email_domain: "Your email domain may not sign in to this gateway.",
  oidc_failed: "Company sign-in failed.",
};

export function SignInPage(props: { onSignedIn: (s: SessionInfo) => void; invite: boolean }) {
  const [mode, setMode] = useState<"signin" | "signup">("signin");
  const [signup, setSignup] = useState<SignupMode | null>(null);
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const inviteToken = props.invite ? window.location.hash.slice(1) : "";

  const [company, setCompany] = useState<{ label: string } | null>(null);
  const [passwords, setPasswords] = useState(true);
  const companyError = new URLSearchParams(window.location.search).get("oidc_error");

  useEffect(() => {
    api<SignInConfig>("GET", "/config").then(
      (c) => {
        setSignup(c.signup);
        setCompany(c.company_sign_in);
        setPasswords(c.password_sign_in);
      },
      () => undefined,
    );
  }, []);

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = mode === "signin" ? { email, password } : { email, password, ...(inviteToken && { invite_token: inviteToken }) };
      const session = await api<SessionInfo>("POST", mode === "signin" ? "/signin" : "/signup", body);
      // Signing up with an invite already accepted it: go and see the workspace list.
      if (mode === "signup" && inviteToken) navigate("/workspaces");
      props.onSignedIn(session);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const canSignUp = signup === "open" || (signup === "invite" && inviteToken !== "");
  return (
    <main className="narrow">
      <h1>Model Gateway</h1>
      {props.invite && <p className="notice">You were invited to a workspace. Sign in (or create an account) to accept.</p>}
      {companyError && (
        <p className="error" role="alert">
          {COMPANY_SIGN_IN_ERRORS[companyError] ?? "Company sign-in failed."} ({companyError})
        </p>
      )}
      {company && (
        <p>
          <a className="button primary" href="/dashboard/api/auth/oidc/start">
            Sign in with {company.label}
          </a>
        </p>
      )}
      {passwords && (
        <form onSubmit={(event) => void submit(event)} aria-labelledby="form-title">
          <h2 id="form-title">{mode === "signin" ? "Sign in" : "Create an account"}</h2>
          <label>
            Email
            <input type="email" name="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <label>
            Password
            <input
              type="password"
              name="password"
              autoComplete={mode === "signin" ? "current-password" : "new-password"}
              required
              minLength={mode === "signup" ? 8 : undefined}
              value={password}
              onChange={(e) => setPassword(e.target.value)}
            />
          </label>
          <ErrorText error={error} />
          <button type="submit" className="primary" disabled={busy}>
            {mode === "signin" ? "Sign in" : "Create account"}
          </button>
        </form>
      )}
      {passwords && canSignUp && (
        <p>
          {mode === "signin" ? "No account yet? " : "Already have an account? "}
          <button type="button" className="link" onClick={() => setMode(mode === "signin" ? "signup" : "signin")}>
            {mode === "signin" ? "Create one" : "Sign in instead"}
          </button>
        </p>
      )}
      {passwords && mode === "signin" && (
        <p className="hint">Forgot your password{signup === "closed" ? ", or have no account yet" : ""}? An administrator of this gateway can send you a set-password link.</p>
      )}
    </main>
  );
}
