// The Catalog page's shared provider keys (docs/dashboard.md, "Catalog"): last four characters only,
// add (the field hides what is typed), test (one smallest request, paid by the operator: its status,
// latency and cost shown), enable or disable, and remove after confirming. With catalog.source: file
// the keys are the file's: tested, enabled and disabled here, added and removed in the file.
import { useState } from "react";
import { api, type CatalogProviderKey, type LiveCatalog, type ProviderKeyTest } from "../api";
import { Money, TableScroll, type useAction } from "../components";
import { AddProviderKeyForm } from "./add-provider-key-form";

export type Run = ReturnType<typeof useAction>["run"];

/** writable: keys can be added and removed here (a database catalog); the file's keys are tested, enabled and disabled only. */
export function ProviderKeys(props: { catalog: LiveCatalog; writable: boolean; run: Run }) {
  const providers = Object.keys(props.catalog.document.providers).sort();
  const [confirming, setConfirming] = useState<string | null>(null);
  const [tested, setTested] = useState<{ name: string; test: ProviderKeyTest } | null>(null);
  const keys = props.catalog.provider_keys;

  const setStatus = (k: CatalogProviderKey, status: CatalogProviderKey["status"]) =>
    void props.run(
      () => api("PATCH", `/admin/catalog/provider-keys/${encodeURIComponent(k.id)}`, { status }),
      `${status === "active" ? "Enabled" : "Disabled"} the ${k.provider} key …${k.last4}.`,
    );

  const test = (k: CatalogProviderKey) => {
    const name = `${k.provider} key …${k.last4}`;
    setTested(null);
    void props.run(
      async () => setTested({ name, test: await api<ProviderKeyTest>("POST", `/admin/catalog/provider-keys/${encodeURIComponent(k.id)}/test`, {}) }),
      `Tested the ${name}.`,
    );
  };

  return (
    <section aria-labelledby="catalog-keys-title">
      <h2 id="catalog-keys-title">Provider keys</h2>
      <p className="hint">
        {props.catalog.source === "file"
          ? "The providers' shared keys from the config file, shown by their last four characters only: add or remove them in the file; test, disable and enable them here."
          : "The providers' shared keys, stored encrypted and shown by their last four characters only."}{" "}
        A key the upstream refuses is disabled by the gateway.
      </p>
      <TableScroll label="Provider keys table">
        <table>
          <caption>Shared provider keys</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Label</th>
              <th scope="col">Key</th>
              <th scope="col">Status</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {keys.length === 0 && (
              <tr>
                <td colSpan={5}>No shared provider keys.</td>
              </tr>
            )}
            {keys.map((k) => {
              const name = `${k.provider} key …${k.last4}`;
              return (
                <tr key={k.id}>
                  <th scope="row">{k.provider}</th>
                  <td>{k.label || "—"}</td>
                  <td>
                    <code>…{k.last4}</code>
                  </td>
                  <td>
                    <span className={`badge ${k.status === "active" ? "enabled" : "bad"}`}>{k.status}</span>
                  </td>
                  <td className="actions">
                    <button type="button" onClick={() => test(k)}>
                      Test {name}
                    </button>
                    {k.status === "active" ? (
                      <button type="button" onClick={() => setStatus(k, "disabled")}>
                        Disable {name}
                      </button>
                    ) : (
                      <button type="button" onClick={() => setStatus(k, "active")}>
                        Enable {name}
                      </button>
                    )}
                    {k.source === "file" ? null : confirming === k.id ? (
                      <>
                        <button
                          type="button"
                          className="danger"
                          onClick={() => void props.run(() => api("DELETE", `/admin/catalog/provider-keys/${encodeURIComponent(k.id)}`), `Removed the ${name}.`)}
                        >
                          Yes, remove {name}
                        </button>
                        <button type="button" onClick={() => setConfirming(null)}>
                          Cancel
                        </button>
                      </>
                    ) : (
                      <button type="button" className="danger" onClick={() => setConfirming(k.id)}>
                        Remove {name}
                      </button>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </TableScroll>
      {tested && <KeyTestOutcome name={tested.name} test={tested.test} />}
      {props.writable && <AddProviderKeyForm providers={providers} url="/admin/catalog/provider-keys" run={props.run} label="Add a shared provider key" />}
    </section>
  );
}

/** What a key's test answered: status, latency and cost (the operator's), or why it failed. */
function KeyTestOutcome(props: { name: string; test: ProviderKeyTest }) {
  const t = props.test;
  const verdict = t.ok ? "works" : t.refused ? "was refused by the upstream" : "failed";
  return (
    <section className="key-test" aria-label={`Test of the ${props.name}`}>
      <p>
        <span className={`badge ${t.ok ? "enabled" : "bad"}`}>{t.ok ? "ok" : t.refused ? "refused" : "failed"}</span> The {props.name} {verdict}
        {t.disabled && "; it is disabled now (enable it once the provider accepts it again)"}.
      </p>
      <dl className="facts">
        <dt>Status</dt>
        <dd>{t.status === null ? "no response" : `HTTP ${t.status}`}</dd>
        <dt>Latency</dt>
        <dd>{t.latency_ms} ms</dd>
        <dt>Cost (the operator&apos;s)</dt>
        <dd>
          <Money usd={t.cost_usd} testId="key-test-cost" />
        </dd>
        <dt>Model</dt>
        <dd>{t.model}</dd>
        {t.error && (
          <>
            <dt>Error</dt>
            <dd>{t.error}</dd>
          </>
        )}
      </dl>
    </section>
  );
}
