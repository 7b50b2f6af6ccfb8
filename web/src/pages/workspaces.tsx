// The workspaces the account belongs to, and creating one (the creator becomes its owner).
import { useState, type FormEvent } from "react";
import { api, type Workspace } from "../api";
import { ErrorText, Link, useLoad } from "../components";
import { navigate } from "../router";

export function WorkspacesPage() {
  const list = useLoad(() => api<{ data: Workspace[] }>("GET", "/workspaces"), []);
  const [name, setName] = useState("");
  const [error, setError] = useState<unknown>(null);

  async function create(event: FormEvent) {
    event.preventDefault();
    setError(null);
    try {
      const created = await api<{ workspace: Workspace }>("POST", "/workspaces", { name });
      setName("");
      navigate(`/workspaces/${encodeURIComponent(created.workspace.id)}`);
    } catch (err) {
      setError(err);
    }
  }

  return (
    <section aria-labelledby="ws-title">
      <h1 id="ws-title">Workspaces</h1>
      <p className="hint">A workspace shares keys and a usage view among its members. Each key is still paid for by the account that created it.</p>
      <form className="inline-form" onSubmit={(event) => void create(event)} aria-label="Create a workspace">
        <label>
          Workspace name
          <input name="workspace_name" required maxLength={100} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <button type="submit" className="primary">
          Create workspace
        </button>
        <ErrorText error={error} />
      </form>
      <ErrorText error={list.error} />
      <ul className="cards-list">
        {list.data?.data.length === 0 && <li>You are not in any workspace yet.</li>}
        {list.data?.data.map((w) => (
          <li key={w.id}>
            <Link to={`/workspaces/${encodeURIComponent(w.id)}`}>{w.name}</Link> <span className={`badge role-${w.role}`}>{w.role}</span>{" "}
            <span className="hint">
              {w.members} member{w.members === 1 ? "" : "s"}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
