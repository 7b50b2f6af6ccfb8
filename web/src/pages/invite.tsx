// Accepting an invite: the token is in the URL fragment (#...), which never reaches a server log.
import { useState } from "react";
import { api, type Workspace } from "../api";
import { ErrorText, Link } from "../components";

export function InvitePage() {
  const token = window.location.hash.slice(1);
  const [joined, setJoined] = useState<{ workspace: Workspace; role: string } | null>(null);
  const [error, setError] = useState<unknown>(null);

  async function accept() {
    setError(null);
    try {
      setJoined(await api("POST", "/invites/accept", { token }));
    } catch (err) {
      setError(err);
    }
  }

  if (!token) return <p>This invite link is incomplete. Ask for the full link.</p>;
  return (
    <section aria-labelledby="invite-title" className="narrow">
      <h1 id="invite-title">Workspace invite</h1>
      {joined ? (
        <p role="status">
          You joined <Link to={`/workspaces/${encodeURIComponent(joined.workspace.id)}`}>{joined.workspace.name}</Link> as {joined.role}.
        </p>
      ) : (
        <>
          <p>You have been invited to join a workspace.</p>
          <button type="button" className="primary" onClick={() => void accept()}>
            Accept invite
          </button>
        </>
      )}
      <ErrorText error={error} />
    </section>
  );
}
