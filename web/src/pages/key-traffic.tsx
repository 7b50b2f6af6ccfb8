// A key's rate and concurrency limits as they apply now: the key's own, its account's (set by an
// administrator) and the tier's defaults, per model where one has its own, each with the current
// minute's use (GET /dashboard/api/keys/:id, "traffic"). Also the text form of per-model limits.
import { api, type LimitSet, type TrafficUse } from "../api";
import { ErrorText, formatDate, useLoad } from "../components";

export function KeyTraffic(props: { keyId: string; label: string }) {
  const detail = useLoad(() => api<{ traffic: TrafficUse[] }>("GET", `/keys/${encodeURIComponent(props.keyId)}`), [props.keyId]);
  if (detail.error) return <ErrorText error={detail.error} />;
  if (!detail.data) return <p className="loading">Loading…</p>;
  const rows = detail.data.traffic;
  if (rows.length === 0) return <p>No rate or concurrency limit applies to {props.label}.</p>;
  return (
    <table className="traffic">
      <caption>Limits of {props.label} and this minute&apos;s use</caption>
      <thead>
        <tr>
          <th scope="col">Limit of</th>
          <th scope="col">Requests</th>
          <th scope="col">Tokens</th>
          <th scope="col">In flight</th>
          <th scope="col">Window resets</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={`${row.subject}/${row.model ?? ""}`}>
            <th scope="row">
              {row.subject === "key" ? "Key" : "Account"}
              {row.model !== null && (
                <>
                  {" · "}
                  <code>{row.model}</code>
                </>
              )}
            </th>
            <td>{usedOf(row.requests, row.requests_per_minute)}</td>
            <td>{usedOf(row.tokens, row.tokens_per_minute)}</td>
            <td>{usedOf(row.in_flight, row.concurrent_requests)}</td>
            <td>{row.resets_at ? formatDate(row.resets_at) : "no window open"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function usedOf(used: number, limit: number | null): string {
  return limit === null ? `${used.toLocaleString()} (no limit)` : `${used.toLocaleString()} / ${limit.toLocaleString()}`;
}

const FIELDS: Record<string, keyof LimitSet> = { rpm: "requests_per_minute", tpm: "tokens_per_minute", concurrent: "concurrent_requests" };

/** Per-model limits as lines of text: "gpt-4o rpm=60 tpm=100000 concurrent=2". */
export function modelLimitsText(models: Record<string, LimitSet> | undefined): string {
  return Object.entries(models ?? {})
    .map(([model, set]) =>
      [
        model,
        ...Object.entries(FIELDS)
          .filter(([, field]) => set[field] !== undefined)
          .map(([name, field]) => `${name}=${set[field]}`),
      ].join(" "),
    )
    .join("\n");
}

/** The inverse of modelLimitsText; throws with the line at fault (the server validates the numbers' bounds). */
export function parseModelLimits(text: string): Record<string, LimitSet> | undefined {
  const models: Record<string, LimitSet> = {};
  for (const [index, line] of text.split("\n").entries()) {
    const words = line.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) continue;
    const [model, ...settings] = words;
    if (settings.length === 0) throw new Error(`Per-model limits, line ${index + 1}: give at least one of rpm=, tpm=, concurrent= after the model.`);
    const set: LimitSet = {};
    for (const setting of settings) {
      const match = /^(rpm|tpm|concurrent)=(\d{1,12})$/.exec(setting);
      if (!match) throw new Error(`Per-model limits, line ${index + 1}: "${setting}" is not rpm=N, tpm=N or concurrent=N.`);
      set[FIELDS[match[1]!]!] = Number(match[2]);
    }
    models[model!] = set;
  }
  return Object.keys(models).length === 0 ? undefined : models;
}
