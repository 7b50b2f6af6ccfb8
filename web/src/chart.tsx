// Spend (bars) and tokens (line) per UTC day as plain SVG, with a text summary for screen readers.
import type { TagUsage, Totals } from "./api";
import { Money } from "./components";
import { formatCount, formatMoney, sumMoney } from "./format";

const WIDTH = 720;
const HEIGHT = 220;
const PAD = { left: 72, right: 64, top: 16, bottom: 36 };

export function UsageChart(props: { days: Array<Totals & { day: string }>; title: string }) {
  const days = props.days;
  const costs = days.map((d) => Number(d.cost_usd));
  const maxCost = Math.max(...costs, 0) || 1;
  const maxTokens = Math.max(...days.map((d) => d.tokens), 0) || 1;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const step = plotW / Math.max(days.length, 1);
  const x = (i: number) => PAD.left + i * step;
  const yCost = (v: number) => PAD.top + plotH - (v / maxCost) * plotH;
  const yTokens = (v: number) => PAD.top + plotH - (v / maxTokens) * plotH;
  const line = days.map((d, i) => `${i ? "L" : "M"}${(x(i) + step / 2).toFixed(1)},${yTokens(d.tokens).toFixed(1)}`).join(" ");
  // The scale may use floats; the amounts shown are exact.
  const total = sumMoney(days.map((d) => d.cost_usd));
  const maxCostText = days.find((d) => Number(d.cost_usd) === maxCost)?.cost_usd ?? "0";
  const labelEvery = Math.ceil(days.length / 8);

  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby="chart-title chart-desc">
        <title id="chart-title">{props.title}</title>
        <desc id="chart-desc">
          {days.length} days, total spend {formatMoney(total)}, {formatCount(days.reduce((a, d) => a + d.tokens, 0))} tokens.
        </desc>
        <line x1={PAD.left} x2={WIDTH - PAD.right} y1={PAD.top + plotH} y2={PAD.top + plotH} className="axis" />
        <text x={PAD.left - 6} y={PAD.top + 4} className="tick" textAnchor="end">
          {formatMoney(maxCostText)}
        </text>
        <text x={PAD.left - 6} y={PAD.top + plotH} className="tick" textAnchor="end">
          {formatMoney("0")}
        </text>
        <text x={WIDTH - PAD.right + 6} y={PAD.top + 4} className="tick tokens">
          {maxTokens} tok
        </text>
        {days.map((d, i) => (
          <rect key={d.day} x={x(i) + step * 0.15} width={step * 0.7} y={yCost(costs[i]!)} height={PAD.top + plotH - yCost(costs[i]!)} className="bar">
            <title>{`${d.day}: ${formatMoney(d.cost_usd)}, ${formatCount(d.tokens)} tokens, ${formatCount(d.requests)} requests`}</title>
          </rect>
        ))}
        <path d={line} className="tokens-line" fill="none" />
        {days.map((d, i) =>
          i % labelEvery === 0 ? (
            <text key={d.day} x={x(i) + step / 2} y={HEIGHT - 12} className="tick" textAnchor="middle">
              {d.day.slice(5)}
            </text>
          ) : null,
        )}
      </svg>
      <figcaption>
        <span className="legend bar-legend" /> spend (USD) <span className="legend line-legend" /> tokens
      </figcaption>
    </figure>
  );
}

/** RFC 4180 quoting, and a leading quote on text a spreadsheet would run as a formula (as the server's CSVs). */
function csvCell(value: string | number): string {
  let text = String(value);
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A breakdown table as a CSV file the browser saves: the figures as the API gives them, every digit. */
export function CsvLink(props: { file: string; header: string[]; rows: Array<Array<string | number>> }) {
  const text = [props.header, ...props.rows].map((cells) => `${cells.map(csvCell).join(",")}\r\n`).join("");
  return (
    <a className="csv-link" href={`data:text/csv;charset=utf-8,${encodeURIComponent(text)}`} download={props.file}>
      CSV
    </a>
  );
}

/** csv: the file name of the table's CSV link; none: no link. */
export function TotalsTable(props: { caption: string; first: string; rows: Array<Totals & { label: string }>; csv?: string }) {
  return (
    <table>
      <caption>
        {props.caption}
        {props.csv && (
          <>
            {" "}
            <CsvLink
              file={props.csv}
              header={[props.first.toLowerCase(), "requests", "input_tokens", "output_tokens", "tokens", "cost_usd"]}
              rows={props.rows.map((r) => [r.label, r.requests, r.input_tokens, r.output_tokens, r.tokens, r.cost_usd])}
            />
          </>
        )}
      </caption>
      <thead>
        <tr>
          <th scope="col">{props.first}</th>
          <th scope="col">Requests</th>
          <th scope="col">Input tokens</th>
          <th scope="col">Output tokens</th>
          <th scope="col">Spend</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.length === 0 && (
          <tr>
            <td colSpan={5}>No usage in this period.</td>
          </tr>
        )}
        {props.rows.map((r) => (
          <tr key={r.label}>
            <th scope="row">{r.label}</th>
            <td>{r.requests}</td>
            <td>{r.input_tokens}</td>
            <td>{r.output_tokens}</td>
            <td className="num">
              <Money usd={r.cost_usd} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Spend per tag (by_tag): a request with two tags counts in both, so the rows may add up to more than the total. */
export function TagTable(props: { caption: string; rows: TagUsage[]; csv?: string }) {
  return (
    <table>
      <caption>
        {props.caption}
        {props.csv && (
          <>
            {" "}
            <CsvLink file={props.csv} header={["tag", "requests", "tokens", "cost_usd"]} rows={props.rows.map((r) => [r.tag, r.requests, r.tokens, r.cost_usd])} />
          </>
        )}
      </caption>
      <thead>
        <tr>
          <th scope="col">Tag</th>
          <th scope="col">Requests</th>
          <th scope="col">Tokens</th>
          <th scope="col">Spend</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.length === 0 && (
          <tr>
            <td colSpan={4}>No tagged requests in this period.</td>
          </tr>
        )}
        {props.rows.map((r) => (
          <tr key={r.tag}>
            <th scope="row">{r.tag}</th>
            <td>{r.requests}</td>
            <td>{r.tokens}</td>
            <td className="num">
              <Money usd={r.cost_usd} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
