// Administrators: the live catalog (docs/dashboard.md, "Catalog"): where it comes from, the version
// served, its providers, models and tiers, the providers' shared keys, and the version history with
// each version's diff against the catalog served now and a rollback to it. With catalog.source: file
// the page only reads: the file is changed and reloaded instead. Editable, each provider, model and
// tier has its dialog (catalog-entity-forms.tsx, catalog-model-form.tsx), one catalog version a save.
import { useState } from "react";
import { api, type CatalogDocument, type CatalogVersion, type LiveCatalog } from "../api";
import { ErrorText, Link, Notice, TableScroll, formatDate, useAction, useLoad } from "../components";
import { ProviderKeys, type Run } from "./catalog-provider-keys";
import { EntryActions, ProviderDialog, TierDialog, type EntityKind } from "./catalog-entity-forms";
import { ModelDialog } from "./catalog-model-form";
import { McpServerDialog, McpServers } from "./catalog-mcp-servers";
import { HISTORY_LIMIT, History } from "./catalog-history";

/** What a table needs to offer its row actions (an editable catalog only). */
interface Editing {
  version: number;
  run: Run;
  open: (kind: EntityKind, name: string | null) => void;
}

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
  const [dialog, setDialog] = useState<{ kind: EntityKind; name: string | null } | null>(null);
  const edit: Editing | undefined = writable && data.version !== null ? { version: data.version, run: action.run, open: (kind, name) => setDialog({ kind, name }) } : undefined;
  const dialogProps = data &&
    data.version !== null && {
      document: data.document,
      version: data.version,
      onClose: () => setDialog(null),
      onDone: (message: string) => {
        setDialog(null);
        void action.run(async () => undefined, message);
      },
    };

  return (
    <section aria-labelledby="catalog-title">
      <h1 id="catalog-title">Catalog</h1>
      <ErrorText error={catalog.error} />
      <ErrorText error={action.error} />
      {action.status && <Notice>{action.status}</Notice>}
      {data && <Summary catalog={data} versionCount={versions.data ? `${versions.data.data.length}${versions.data.has_more ? "+" : ""}` : null} />}
      {data && <Providers document={data.document} edit={edit} />}
      {data && <Models document={data.document} edit={edit} />}
      {data && <Tiers document={data.document} edit={edit} />}
      {data && data.source === "database" && <McpServers document={data.document} edit={edit} />}
      {dialog && dialogProps && dialog.kind === "provider" && <ProviderDialog name={dialog.name} {...dialogProps} />}
      {dialog && dialogProps && dialog.kind === "model" && <ModelDialog id={dialog.name} {...dialogProps} />}
      {dialog && dialogProps && dialog.kind === "tier" && <TierDialog name={dialog.name} {...dialogProps} />}
      {dialog && dialogProps && dialog.kind === "mcp_server" && <McpServerDialog name={dialog.name} {...dialogProps} />}
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

/** The section's "Add" button, for an editable catalog. */
function AddButton(props: { kind: EntityKind; edit: Editing | undefined }) {
  if (!props.edit) return null;
  return (
    <button type="button" className="primary" onClick={() => props.edit!.open(props.kind, null)}>
      Add {props.kind}
    </button>
  );
}

function StateBadge(props: { entry: Record<string, unknown> }) {
  return props.entry.disabled === true ? <span className="badge bad">disabled</span> : <span className="badge enabled">enabled</span>;
}

function Providers(props: { document: CatalogDocument; edit?: Editing | undefined }) {
  const providers = Object.entries(props.document.providers);
  const edit = props.edit;
  return (
    <section aria-labelledby="catalog-providers-title">
      <h2 id="catalog-providers-title">Providers</h2>
      <AddButton kind="provider" edit={edit} />
      <TableScroll label="Providers table">
        <table>
          <caption>{providers.length === 1 ? "1 provider" : `${providers.length} providers`}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Base URL</th>
              <th scope="col">State</th>
              {edit && <th scope="col">Actions</th>}
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
                <td>
                  <StateBadge entry={p} />
                </td>
                {edit && (
                  <td>
                    <EntryActions kind="provider" name={name} disabled={p.disabled === true} version={edit.version} run={edit.run} onEdit={() => edit.open("provider", name)} />
                  </td>
                )}
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

function Models(props: { document: CatalogDocument; edit?: Editing | undefined }) {
  const models = props.document.models;
  const edit = props.edit;
  return (
    <section aria-labelledby="catalog-models-title">
      <h2 id="catalog-models-title">Models</h2>
      <AddButton kind="model" edit={edit} />
      <p className="hint">
        <Link to="/admin/catalog/models">Search, filter and sort the models, and import prices</Link>
      </p>
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
              <th scope="col">State</th>
              {edit && <th scope="col">Actions</th>}
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
                  <td>
                    <StateBadge entry={m} />
                  </td>
                  {edit && (
                    <td>
                      <EntryActions kind="model" name={id} disabled={m.disabled === true} version={edit.version} run={edit.run} onEdit={() => edit.open("model", id)} />
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}

function Tiers(props: { document: CatalogDocument; edit?: Editing | undefined }) {
  const tiers = Object.entries(props.document.tiers);
  const edit = props.edit;
  return (
    <section aria-labelledby="catalog-tiers-title">
      <h2 id="catalog-tiers-title">Tiers</h2>
      <AddButton kind="tier" edit={edit} />
      <TableScroll label="Tiers table">
        <table>
          <caption>{tiers.length === 1 ? "1 tier" : `${tiers.length} tiers`}</caption>
          <thead>
            <tr>
              <th scope="col">Tier</th>
              <th scope="col">Models</th>
              <th scope="col">Other settings</th>
              {edit && <th scope="col">Actions</th>}
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
                  {edit && (
                    <td>
                      <EntryActions kind="tier" name={name} disabled={false} version={edit.version} run={edit.run} onEdit={() => edit.open("tier", name)} />
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
    </section>
  );
}
