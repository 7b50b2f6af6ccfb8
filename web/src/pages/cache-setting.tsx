// The response cache's opt-in of a key (Keys page, "Cache") or a workspace (workspace page): whether it
// is on, its TTL and scope, and what applies (the key's own setting or its workspace's). Off removes the
// own setting, so a key then follows its workspace. GET/PATCH/DELETE {base}/cache (docs/dashboard.md).
import { useEffect, useState, type FormEvent } from "react";
import { api } from "../api";
import { ErrorText, Notice, useAction, useLoad } from "../components";

type CacheScope = "account" | "gateway";

/** GET /dashboard/api/keys/:id/cache and /workspaces/:id/cache (src/dashboard/routes/cache-setting-routes.ts). */
export interface CacheSettingView {
  subject_type: "key" | "workspace";
  id: string;
  cache: { ttl_seconds: number; scope: CacheScope; updated_at: string } | null;
  applies: { source: "key" | "workspace"; source_id: string; ttl_seconds: number; scope: CacheScope } | null;
  bounds: { default_ttl_seconds: number; min_ttl_seconds: number; max_ttl_seconds: number; allow_gateway_scope: boolean };
}

function appliesText(view: CacheSettingView): string {
  const a = view.applies;
  if (a === null) return "Off: answers are not cached.";
  const from = a.source === view.subject_type ? `its own setting` : `inherited from workspace ${a.source_id}`;
  const who = a.scope === "gateway" ? "every account on this gateway" : "this account only";
  return `On (${from}): identical requests are answered from the cache for ${a.ttl_seconds} s, shared with ${who}.`;
}

/** base: "/keys/ID" or "/workspaces/ID"; canChange: the key's owner, or a workspace's owner or admin. */
export function CacheSettingSection(props: { base: string; label: string; canChange: boolean }) {
  const setting = useLoad(() => api<CacheSettingView>("GET", `${props.base}/cache`), [props.base]);
  const { error, status, run } = useAction(() => setting.reload());
  const view = setting.data;
  return (
    <section aria-label={`Response cache of ${props.label}`} className="cache-setting">
      <h3>Response cache</h3>
      <ErrorText error={setting.error ?? error} />
      {status && <Notice>{status}</Notice>}
      {view && (
        <>
          <p data-testid="cache-applies">{appliesText(view)}</p>
          {props.canChange && (
            <CacheSettingForm
              view={view}
              label={props.label}
              onSave={(body) =>
                body === null
                  ? run(() => api("DELETE", `${props.base}/cache`), `Response cache of ${props.label} turned off.`)
                  : run(() => api("PATCH", `${props.base}/cache`, body), `Response cache of ${props.label} saved.`)
              }
            />
          )}
        </>
      )}
    </section>
  );
}

function CacheSettingForm(props: { view: CacheSettingView; label: string; onSave: (body: { ttl_seconds: number; scope: CacheScope } | null) => Promise<boolean> }) {
  const { cache, bounds, subject_type } = props.view;
  const [on, setOn] = useState(cache !== null);
  const [ttl, setTtl] = useState(String(cache?.ttl_seconds ?? bounds.default_ttl_seconds));
  const [scope, setScope] = useState<CacheScope>(cache?.scope ?? "account");
  useEffect(() => {
    setOn(cache !== null);
    setTtl(String(cache?.ttl_seconds ?? bounds.default_ttl_seconds));
    setScope(cache?.scope ?? "account");
  }, [cache, bounds.default_ttl_seconds]);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    void props.onSave(on ? { ttl_seconds: Number(ttl), scope } : null);
  };
  return (
    <form onSubmit={submit} aria-label={`Response cache setting of ${props.label}`}>
      <label className="check">
        <input type="checkbox" checked={on} onChange={(e) => setOn(e.target.checked)} />
        Cache answers {subject_type === "key" ? "for this key (off: it follows its workspace, if any)" : "for this workspace's keys"}
      </label>
      {on && (
        <>
          <label>
            TTL (seconds, {bounds.min_ttl_seconds}–{bounds.max_ttl_seconds}){" "}
            <input type="number" required min={bounds.min_ttl_seconds} max={bounds.max_ttl_seconds} step={1} value={ttl} onChange={(e) => setTtl(e.target.value)} />
          </label>
          {bounds.allow_gateway_scope && (
            <label>
              Shared with{" "}
              <select value={scope} onChange={(e) => setScope(e.target.value === "gateway" ? "gateway" : "account")}>
                <option value="account">this account only</option>
                <option value="gateway">every account on this gateway</option>
              </select>
            </label>
          )}
        </>
      )}
      <button type="submit">Save cache setting</button>
    </form>
  );
}
