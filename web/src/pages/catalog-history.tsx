// The Catalog page's version history (docs/dashboard.md, "Catalog"): the versions newest first, a
// page at a time ("Show older versions" follows the API's cursor), each one's diff against the
// catalog served now, and a rollback to it after confirming.
import { useState } from "react";
import { api, type CatalogDiff, type CatalogSectionDiff, type CatalogVersion } from "../api";
import { ErrorText, formatDate, useLoad } from "../components";
import type { Run } from "./catalog-provider-keys";

/** Versions per page of the history; older ones load on demand. */
export const HISTORY_LIMIT = 20;

export function History(props: { versions: { data: CatalogVersion[]; has_more: boolean } | null; error: unknown; current: number | null; writable: boolean; run: Run }) {
  const [selected, setSelected] = useState<number | null>(null);
  const [confirming, setConfirming] = useState(false);
  const diff = useLoad(async () => (selected === null ? null : api<CatalogDiff>("GET", `/admin/catalog/diff?from=${selected}`)), [selected, props.current]);
  // Older pages, loaded on demand after the first; a new version starts the list again.
  const [olderPages, setOlder] = useState<{ current: number | null; data: CatalogVersion[]; has_more: boolean } | null>(null);
  const [olderError, setOlderError] = useState<unknown>(null);
  const older = olderPages?.current === props.current ? olderPages : null;
  const listed = [...(props.versions?.data ?? []), ...(older?.data ?? [])];
  const hasMore = older ? older.has_more : (props.versions?.has_more ?? false);

  async function loadOlder() {
    setOlderError(null);
    try {
      const page = await api<{ data: CatalogVersion[]; has_more: boolean }>("GET", `/admin/catalog/versions?limit=${HISTORY_LIMIT}&before=${listed[listed.length - 1]!.version}`);
      setOlder({ current: props.current, data: [...(older?.data ?? []), ...page.data], has_more: page.has_more });
    } catch (error) {
      setOlderError(error);
    }
  }

  function select(version: number) {
    setSelected(version);
    setConfirming(false);
  }

  async function rollBack(version: number) {
    setConfirming(false);
    if (await props.run(() => api("POST", "/admin/catalog/rollback", { version }), `Rolled back to version ${version}: the catalog is now a new version with its contents.`))
      setSelected(null);
  }

  return (
    <section aria-labelledby="catalog-history-title">
      <h2 id="catalog-history-title">Version history</h2>
      <ErrorText error={props.error} />
      <ol className="cards-list catalog-versions" aria-label="Catalog versions" data-testid="catalog-versions">
        {listed.map((v) => (
          <li key={v.version}>
            <button type="button" className="link" aria-pressed={selected === v.version} onClick={() => select(v.version)}>
              Version {v.version}
            </button>{" "}
            {v.version === props.current && <span className="badge enabled">served now</span>} <span>{v.reason}</span>{" "}
            <span className="hint">
              {v.actor ?? "—"}, {formatDate(v.created_at)}
            </span>
          </li>
        ))}
      </ol>
      <ErrorText error={olderError} />
      {hasMore && listed.length > 0 && (
        <button type="button" onClick={() => void loadOlder()}>
          Show older versions
        </button>
      )}
      {selected !== null && (
        <section aria-labelledby="catalog-diff-title" className="catalog-diff" data-testid="catalog-diff">
          <h3 id="catalog-diff-title">
            Version {selected} against the catalog served now (version {props.current})
          </h3>
          <ErrorText error={diff.error} />
          {diff.data && <DiffView diff={diff.data} />}
          {props.writable && selected !== props.current && (
            <div className="actions">
              {confirming ? (
                <div role="alertdialog" aria-labelledby="rollback-question" className="confirm">
                  <p id="rollback-question">Roll the catalog back to version {selected}? Every gateway process serves it within a second, as a new version.</p>
                  <div className="actions">
                    <button type="button" className="danger" onClick={() => void rollBack(selected)}>
                      Yes, roll back to version {selected}
                    </button>
                    <button type="button" onClick={() => setConfirming(false)}>
                      Cancel
                    </button>
                  </div>
                </div>
              ) : (
                <button type="button" className="primary" onClick={() => setConfirming(true)}>
                  Roll back to this version
                </button>
              )}
            </div>
          )}
        </section>
      )}
    </section>
  );
}

function DiffView(props: { diff: CatalogDiff }) {
  const { changes } = props.diff;
  const sections: Array<[string, CatalogSectionDiff]> = [
    ["Providers", changes.providers],
    ["Models", changes.models],
    ["Tiers", changes.tiers],
    ["MCP servers", changes.mcp_servers],
  ];
  const empty = sections.every(([, s]) => Object.keys(s.added).length + Object.keys(s.removed).length + Object.keys(s.changed).length === 0) && changes.demo === null;
  if (empty) return <p>No differences: this version&apos;s catalog is the one served now.</p>;
  // The diff goes from the selected version to the current one: "added" is in the current catalog only.
  return (
    <>
      <p className="hint">
        Added: in the catalog served now only. Removed: in version {props.diff.from} only. Changed: before (version {props.diff.from}) → after (now).
      </p>
      {changes.demo !== null && (
        <p>
          demo: {String(changes.demo.before)} → {String(changes.demo.after)}
        </p>
      )}
      {sections.map(([title, section]) => {
        const entries = [
          ...Object.entries(section.added).map(([name, after]) => ({ name, change: "added", body: JSON.stringify(after, null, 2) })),
          ...Object.entries(section.removed).map(([name, before]) => ({ name, change: "removed", body: JSON.stringify(before, null, 2) })),
          ...Object.entries(section.changed).map(([name, c]) => ({
            name,
            change: "changed",
            body: `${JSON.stringify(c.before, null, 2)}\n→\n${JSON.stringify(c.after, null, 2)}`,
          })),
        ];
        if (entries.length === 0) return null;
        return (
          <div key={title}>
            <h4>{title}</h4>
            <ul className="cards-list">
              {entries.map((e) => (
                <li key={`${e.change}-${e.name}`}>
                  <strong>
                    <code>{e.name}</code>
                  </strong>{" "}
                  <span className="badge">{e.change}</span>
                  <pre className="diff-json">{e.body}</pre>
                </li>
              ))}
            </ul>
          </div>
        );
      })}
    </>
  );
}
