// Administrators: the live catalog (docs/dashboard.md, "Catalog"): where it comes from, the version
// served, its providers, models and tiers, the providers' shared keys, and the version history with
// each version's diff against the catalog served now and a rollback to it. With catalog.source: file
// the page only reads: the file is changed and reloaded instead.
import { useState } from "react";
import { api, type CatalogDiff, type CatalogDocument, type CatalogSectionDiff, type CatalogVersion, type LiveCatalog } from "../api";
import { ErrorText, Notice, TableScroll, formatDate, useAction, useLoad } from "../components";
import { ProviderKeys, type Run } from "./catalog-provider-keys";

const HISTORY_LIMIT = 50;

export function CatalogPage() {
  const catalog = useLoad(() => api<LiveCatalog>("GET", "/admin/catalog"), []);
  const versions = useLoad(() => api<{ data: CatalogVersion[]; has_more: boolean }>("GET", `/admin/catalog/versions?limit=${HISTORY_LIMIT}`), []);
  const reload = () => {
    catalog.reload();
    versions.reload();
  };
  const action = useAction(reload);
  const data = catalog.data;
  const writable = data !== null && !data.read_only;

  return (
    <section aria-labelledby="catalog-title">
      <h1 id="catalog-title">Catalog</h1>
      <ErrorText error={catalog.error} />
      <ErrorText error={action.error} />
      {action.status && <Notice>{action.status}</Notice>}
      {data && <Summary catalog={data} versionCount={versions.data ? `${versions.data.data.length}${versions.data.has_more ? "+" : ""}` : null} />}
      {data && <Providers document={data.document} />}
      {data && <Models document={data.document} />}
      {data && <Tiers document={data.document} />}
      {data && <ProviderKeys catalog={data} writable={writable} run={action.run} />}
      {data && data.source === "database" && <History versions={versions.data} error={versions.error} current={data.version} writable={writable} run={action.run} />}
    </section>
  );
}

/** versionCount: how many versions the history lists ("50+" when there are more). */
function Summary(props: { catalog: LiveCatalog; versionCount: string | null }) {
  const c = props.catalog;
  return (
    <>
      <dl className="facts" aria-label="Catalog summary">
        <dt>Source</dt>
        <dd data-testid="catalog-source">
          {c.source} {c.read_only ? <span className="badge bad">read-only</span> : <span className="badge enabled">editable</span>}
        </dd>
        <dt>Version</dt>
        <dd data-testid="catalog-version">{c.version === null ? "— (the config file)" : c.version}</dd>
        {c.version !== null && (
          <>
            <dt>Reason</dt>
            <dd>{c.reason}</dd>
            <dt>Author</dt>
            <dd>{c.actor ?? "—"}</dd>
            <dt>Made</dt>
            <dd>{formatDate(c.created_at ?? null)}</dd>
          </>
        )}
        {props.versionCount !== null && c.source === "database" && (
          <>
            <dt>Versions</dt>
            <dd data-testid="catalog-version-count">{props.versionCount}</dd>
          </>
        )}
      </dl>
      {c.read_only && (
        <p className="hint" role="note">
          catalog.source: file: change gateway.config.yaml and reload.
        </p>
      )}
    </>
  );
}

const text = (value: unknown): string => (typeof value === "string" ? value : value === undefined || value === null ? "—" : JSON.stringify(value));

function Providers(props: { document: CatalogDocument }) {
  const providers = Object.entries(props.document.providers);
  return (
    <section aria-labelledby="catalog-providers-title">
      <h2 id="catalog-providers-title">Providers</h2>
      <TableScroll label="Providers table">
        <table>
          <caption>{providers.length === 1 ? "1 provider" : `${providers.length} providers`}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Base URL</th>
            </tr>
          </thead>
          <tbody>
            {providers.map(([name, p]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>{text(p.type)}</td>
                <td>
                  <code>{text(p.base_url)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}

/** The tiers that list a model, "*" (every model) included. */
function tiersOf(document: CatalogDocument, id: string): string[] {
  return Object.entries(document.tiers)
    .filter(([, tier]) => Array.isArray(tier.models) && (tier.models.includes(id) || tier.models.includes("*")))
    .map(([name]) => name);
}

function Models(props: { document: CatalogDocument }) {
  const models = props.document.models;
  return (
    <section aria-labelledby="catalog-models-title">
      <h2 id="catalog-models-title">Models</h2>
      <TableScroll label="Models table">
        <table data-testid="catalog-models">
          <caption>{models.length === 1 ? "1 model" : `${models.length} models`}</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Kind</th>
              <th scope="col">Provider</th>
              <th scope="col">Prices (USD)</th>
              <th scope="col">Tiers</th>
            </tr>
          </thead>
          <tbody>
            {models.map((m) => {
              const id = text(m.id);
              const pricing = typeof m.pricing === "object" && m.pricing !== null ? Object.entries(m.pricing as Record<string, unknown>) : [];
              const deployments = Array.isArray(m.deployments) ? (m.deployments as Array<Record<string, unknown>>).map((d) => text(d.provider)) : [];
              return (
                <tr key={id}>
                  <th scope="row">
                    <code>{id}</code>
                  </th>
                  <td>{text(m.kind)}</td>
                  <td>{m.provider !== undefined ? text(m.provider) : deployments.length > 0 ? deployments.join(", ") : "—"}</td>
                  <td>
                    {pricing.length === 0
                      ? "—"
                      : pricing.map(([dimension, price]) => (
                          <div key={dimension}>
                            {dimension}: {text(price)}
                          </div>
                        ))}
                  </td>
                  <td>{tiersOf(props.document, id).join(", ") || "—"}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}

function Tiers(props: { document: CatalogDocument }) {
  const tiers = Object.entries(props.document.tiers);
  return (
    <section aria-labelledby="catalog-tiers-title">
      <h2 id="catalog-tiers-title">Tiers</h2>
      <TableScroll label="Tiers table">
        <table>
          <caption>{tiers.length === 1 ? "1 tier" : `${tiers.length} tiers`}</caption>
          <thead>
            <tr>
              <th scope="col">Tier</th>
              <th scope="col">Models</th>
              <th scope="col">Other settings</th>
            </tr>
          </thead>
          <tbody>
            {tiers.map(([name, tier]) => {
              const { models, ...rest } = tier;
              return (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  <td>{Array.isArray(models) ? models.map(text).join(", ") : text(models)}</td>
                  <td>{Object.keys(rest).length === 0 ? "—" : <code>{JSON.stringify(rest)}</code>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}

function History(props: { versions: { data: CatalogVersion[]; has_more: boolean } | null; error: unknown; current: number | null; writable: boolean; run: Run }) {
  const [selected, setSelected] = useState<number | null>(null);
  const [confirming, setConfirming] = useState(false);
  const diff = useLoad(async () => (selected === null ? null : api<CatalogDiff>("GET", `/admin/catalog/diff?from=${selected}`)), [selected, props.current]);

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
        {props.versions?.data.map((v) => (
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
      {props.versions?.has_more && <p className="hint">Showing the newest {HISTORY_LIMIT} versions.</p>}
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
