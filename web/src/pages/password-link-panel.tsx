// A set-password link an administrator just issued: shown once, here, to copy and send to the person
// (only its hash is stored). Used by the Accounts page (a new person) and an account's page (a reset).
import { useState } from "react";
import type { PasswordLink } from "../api";
import { ErrorText, formatDate } from "../components";

export function PasswordLinkPanel(props: { email: string; link: PasswordLink; onDismiss: () => void }) {
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<unknown>(null);
  async function copy() {
    try {
      await navigator.clipboard.writeText(props.link.url);
      setCopied(true);
    } catch {
      setError(new Error("The browser refused clipboard access; select the link and copy it by hand."));
    }
  }
  const what = props.link.purpose === "setup" ? "set their first password" : "choose a new password (the current one works until then)";
  return (
    <div className="new-key" role="region" aria-labelledby="password-link-title">
      <h2 id="password-link-title">Set-password link for {props.email}</h2>
      <p>
        Send this link to {props.email} to {what}. It works once, until {formatDate(props.link.expires_at)}, and this is the only time it is shown.
      </p>
      <code className="secret" data-testid="password-link">
        {props.link.url}
      </code>
      <div className="actions">
        <button type="button" onClick={() => void copy()}>
          {copied ? "Copied" : "Copy link"}
        </button>
        <button type="button" onClick={props.onDismiss}>
          I have sent it; hide the link
        </button>
      </div>
      <ErrorText error={error} />
    </div>
  );
}
