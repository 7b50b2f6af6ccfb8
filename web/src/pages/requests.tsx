// Requests: the request log (docs/dashboard.md, "Requests"), every request of the account's keys,
// answered or refused, newest first; filtered, paged and downloadable as CSV. Administrators can
// switch to every account's requests, the ones no key was attributed to included.
import { useId, useState, type FormEvent } from "react";
import { api, type Key } from "../api";
import { ErrorText, formatDate, Money, useLoad } from "../components";
import { ms, RequestDetails, type RequestRow } from "./request-details";

interface Filters {
  request_id: string;
  key_id: string;
  model: string;
  status: string;
  since: string;
  until: string;
  account_id: string;
}

const NO_FILTERS: Filters = { request_id: "", key_id: "", model: "", status: "", since: "", until: "", account_id: "" };

const STATUS_CHOICES: Array<[string, string]> = [
  ["", "Any"],
  ["error", "Any error (400 and up)"],
  ["2xx", "2xx answered"],
  ["4xx", "4xx refused"],
  ["5xx", "5xx failed"],
  ["401", "401 unauthenticated"],
  ["402", "402 budget or balance"],
  ["403", "403 forbidden"],
  ["404", "404 not found"],
  ["429", "429 rate limited"],
  ["499", "499 client went away"],
  ["502", "502 upstream failed"],
];

/** The filters as a query string; the date fields are local times, sent as ISO 8601 instants. */
function queryOf(filters: Filters, allAccounts: boolean): string {
  const params = new URLSearchParams();
  for (const name of ["request_id", "key_id", "model", "status"] as const) {
    const value = filters[name].trim();
    if (value) params.set(name, value);
  }
  for (const name of ["since", "until"] as const) {
    const value = filters[name];
    if (value && !Number.isNaN(new Date(value).getTime())) params.set(name, new Date(value).toISOString());
  }
  if (allAccounts && filters.account_id.trim()) params.set("account_id", filters.account_id.trim());
  return params.toString();
}

export function RequestsPage(props: { isAdmin: boolean }) {
  const [allAccounts, setAllAccounts] = useState(false);
  const [draft, setDraft] = useState<Filters>(NO_FILTERS);
  const [applied, setApplied] = useState<Filters>(NO_FILTERS);
  // A stack of cursors: the top one is the page shown; "Newer" pops, "Older" pushes.
  const [cursors, setCursors] = useState<Array<string | null>>([null]);
  const cursor = cursors[cursors.length - 1] ?? null;
  const [opened, setOpened] = useState<RequestRow | null>(null);
  const base = allAccounts ? "/admin/requests" : "/requests";
  const query = queryOf(applied, allAccounts);
  const keys = useLoad(() => api<{ data: Key[] }>("GET", "/keys"), []);
  const page = useLoad(
    () => api<{ data: RequestRow[]; next_cursor: string | null }>("GET", `${base}?limit=25${query ? `&${query}` : ""}${cursor ? `&cursor=${cursor}` : ""}`),
    [base, query, cursor],
  );

  function apply(event: FormEvent) {
    event.preventDefault();
    setApplied(draft);
    setCursors([null]);
  }
  function clear() {
    setDraft(NO_FILTERS);
    setApplied(NO_FILTERS);
    setCursors([null]);
  }
  // Labels name their field with for/id: a label wrapping a select would fold its options into the name.
  const idBase = useId();
  const idOf = (name: keyof Filters) => `${idBase}-${name}`;
  const set = (name: keyof Filters) => (event: { target: { value: string } }) => setDraft({ ...draft, [name]: event.target.value });
  const columns = allAccounts ? 9 : 8;

  return (
    <section aria-labelledby="requests-title">
      <h1 id="requests-title">Requests</h1>
      <p>
        Every request made with {allAccounts ? "any account's keys, and those without a valid key" : "your keys"}, answered or refused, newest first. Prompts and answers are never
        stored.
      </p>
      {props.isAdmin && (
        <label className="period">
          <input
            type="checkbox"
            checked={allAccounts}
            onChange={(e) => {
              setAllAccounts(e.target.checked);
              setCursors([null]);
            }}
          />{" "}
          All accounts (administrator)
        </label>
      )}
      <form className="inline-form" aria-label="Filter requests" onSubmit={apply}>
        <div className="field">
          <label htmlFor={idOf("request_id")}>Request ID</label>
          <input id={idOf("request_id")} value={draft.request_id} onChange={set("request_id")} placeholder="req_…" maxLength={100} spellCheck={false} />
        </div>
        {allAccounts ? (
          <>
            <div className="field">
              <label htmlFor={idOf("account_id")}>Account ID</label>
              <input id={idOf("account_id")} value={draft.account_id} onChange={set("account_id")} maxLength={100} spellCheck={false} />
            </div>
            <div className="field">
              <label htmlFor={idOf("key_id")}>Key ID</label>
              <input id={idOf("key_id")} value={draft.key_id} onChange={set("key_id")} maxLength={100} spellCheck={false} />
            </div>
          </>
        ) : (
          <div className="field">
            <label htmlFor={idOf("key_id")}>Key</label>
            <select id={idOf("key_id")} value={draft.key_id} onChange={set("key_id")}>
              <option value="">Any key</option>
              {keys.data?.data.map((k) => (
                <option key={k.id} value={k.id}>
                  {k.name || k.prefix}
                </option>
              ))}
            </select>
          </div>
        )}
        <div className="field">
          <label htmlFor={idOf("model")}>Model</label>
          <input id={idOf("model")} value={draft.model} onChange={set("model")} maxLength={200} spellCheck={false} />
        </div>
        <div className="field">
          <label htmlFor={idOf("status")}>Status</label>
          <select id={idOf("status")} value={draft.status} onChange={set("status")}>
            {STATUS_CHOICES.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={idOf("since")}>From</label>
          <input id={idOf("since")} type="datetime-local" value={draft.since} onChange={set("since")} />
        </div>
        <div className="field">
          <label htmlFor={idOf("until")}>Until</label>
          <input id={idOf("until")} type="datetime-local" value={draft.until} onChange={set("until")} />
        </div>
        <div className="actions">
          <button type="submit">Apply filters</button>
          <button type="button" onClick={clear}>
            Clear
          </button>
        </div>
      </form>
      <p>
        {/* Streamed by the gateway page by page: a large log downloads without waiting for all of it. */}
        <a href={`/dashboard/api${base}.csv${query ? `?${query}` : ""}`} download>
          Download these requests as CSV
        </a>
      </p>
      <ErrorText error={page.error} />
      {/* Scrolls sideways on a narrow screen; focusable so a keyboard can scroll it too. */}
      <div className="table-scroll" role="region" aria-label="Requests, newest first" tabIndex={0}>
        <table data-testid="requests-table" className="requests">
          <caption>Requests, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Request ID</th>
              {allAccounts && <th scope="col">Account</th>}
              <th scope="col">Key</th>
              <th scope="col">Model</th>
              <th scope="col">Status</th>
              <th scope="col" className="num">
                Latency (ms)
              </th>
              <th scope="col" className="num">
                Tokens in / out
              </th>
              <th scope="col" className="num">
                Cost
              </th>
            </tr>
          </thead>
          <tbody>
            {page.data?.data.length === 0 && (
              <tr>
                <td colSpan={columns}>No requests match.</td>
              </tr>
            )}
            {page.data?.data.map((row) => (
              <tr key={row.request_id}>
                <td>{formatDate(row.created_at)}</td>
                <td className="request-id">
                  {/* The row opens to its details: the error's message, the route, the model asked for. */}
                  <button type="button" className="link" onClick={() => setOpened(row)} aria-haspopup="dialog">
                    <code>{row.request_id}</code>
                    <span className="sr-only"> details</span>
                  </button>
                </td>
                {allAccounts && <td className="wrap-id">{row.account_id ?? "(no key)"}</td>}
                <td>{row.key_name ?? row.key_prefix ?? row.key_id ?? "—"}</td>
                <td>{row.model ?? (row.requested_model ? <span title="No model of this name was served">{row.requested_model} ?</span> : "—")}</td>
                <td>
                  <span className={`badge ${row.status >= 400 ? "bad" : "answered"}`}>{row.status}</span>
                  {row.error_type && <span className="error-type"> {row.error_type}</span>}
                </td>
                <td className="num">{ms(row.latency_ms)}</td>
                <td className="num">
                  {row.input_tokens === null ? (
                    "—"
                  ) : (
                    <>
                      {row.input_tokens} / {row.output_tokens}
                      {row.cached_tokens ? ` (${row.cached_tokens} cached)` : ""}
                      {row.reasoning_tokens ? ` (${row.reasoning_tokens} reasoning)` : ""}
                    </>
                  )}
                </td>
                <td className="num">
                  {row.cost_usd === null ? "—" : <Money usd={row.cost_usd} />}
                  {row.estimated && <abbr title="The upstream reported no usage: the tokens were estimated"> est.</abbr>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {opened && <RequestDetails row={opened} onClose={() => setOpened(null)} />}
      <div className="actions">
        <button type="button" disabled={cursors.length <= 1} onClick={() => setCursors(cursors.slice(0, -1))}>
          Newer
        </button>
        <button type="button" disabled={!page.data?.next_cursor} onClick={() => page.data?.next_cursor && setCursors([...cursors, page.data.next_cursor])}>
          Older
        </button>
      </div>
    </section>
  );
}
