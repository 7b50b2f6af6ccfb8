// The bulk price import of the Catalog models page (docs/dashboard.md, "Catalog models"): a CSV or
// JSON file (chosen or pasted) is previewed first (every price that changes, old -> new, and every
// problem of the file at once), then applied as ONE new catalog version; a file with any problem
// cannot be applied. The formats: docs/operations.md, "Bulk price import".
import { useState } from "react";
import { api } from "../api";
import { ErrorText, Notice, TableScroll } from "../components";

interface PriceImportAnswer {
  dry_run: boolean;
  base_version: number;
  changes: Array<{ model: string; price: string; before: string | null; after: string }>;
  errors: Array<{ row: number; model: string | null; field: string; message: string }>;
  version: { version: number } | null;
}

/** The most characters read from a chosen file (the API's own bound). */
const MAX_CHARS = 2_000_000;

export function PriceImport(props: { baseVersion: number; onApplied: () => void }) {
  const [format, setFormat] = useState<"csv" | "json">("csv");
  const [content, setContent] = useState("");
  const [preview, setPreview] = useState<PriceImportAnswer | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  function edited(text: string) {
    setContent(text);
    setPreview(null);
    setDone(null);
  }

  async function chooseFile(file: File | undefined) {
    if (!file) return;
    if (file.size > MAX_CHARS) {
      setError(new Error(`The file is larger than ${MAX_CHARS} bytes.`));
      return;
    }
    if (/\.json$/i.test(file.name)) setFormat("json");
    else if (/\.csv$/i.test(file.name)) setFormat("csv");
    setError(null);
    edited(await file.text());
  }

  async function send(dryRun: boolean, baseVersion: number) {
    setError(null);
    setDone(null);
    setBusy(true);
    try {
      const answer = await api<PriceImportAnswer>("POST", "/admin/catalog/price-import", { format, content, base_version: baseVersion, dry_run: dryRun });
      if (dryRun) setPreview(answer);
      else {
        setPreview(null);
        setContent("");
        setDone(`Imported ${answer.changes.length} price change(s) as catalog version ${answer.version?.version ?? "?"}.`);
        props.onApplied();
      }
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const canApply = preview !== null && preview.errors.length === 0 && preview.changes.length > 0;
  return (
    <section aria-labelledby="price-import-title" data-testid="price-import">
      <h2 id="price-import-title">Import prices</h2>
      <p className="hint">
        A CSV file with a header row <code>model,input_per_mtok,output_per_mtok,…</code> (an empty cell leaves that price as it is), or a JSON array of{" "}
        <code>{'{"model": "…", "input_per_mtok": "2.50"}'}</code>. Prices in USD as the config file writes them. Preview first; the import is applied as one new catalog version, or
        not at all.
      </p>
      <div className="filters">
        <label>
          Format
          <select value={format} onChange={(e) => (setFormat(e.target.value === "json" ? "json" : "csv"), setPreview(null))} data-testid="price-import-format">
            <option value="csv">CSV</option>
            <option value="json">JSON</option>
          </select>
        </label>
        <label>
          File
          <input type="file" accept=".csv,.json,text/csv,application/json" onChange={(e) => void chooseFile(e.target.files?.[0])} data-testid="price-import-file" />
        </label>
      </div>
      <label className="block">
        Or paste the file
        <textarea rows={6} value={content} onChange={(e) => edited(e.target.value)} spellCheck={false} data-testid="price-import-content" />
      </label>
      <div className="actions">
        <button type="button" onClick={() => void send(true, props.baseVersion)} disabled={busy || content.trim() === ""} data-testid="price-import-preview">
          Preview
        </button>
        <button type="button" className="primary" onClick={() => preview && void send(false, preview.base_version)} disabled={busy || !canApply} data-testid="price-import-apply">
          {preview && canApply ? `Apply ${preview.changes.length} change(s) as a new version` : "Apply"}
        </button>
      </div>
      <ErrorText error={error} />
      {done && <Notice>{done}</Notice>}
      {preview && <PreviewView preview={preview} />}
    </section>
  );
}

function PreviewView(props: { preview: PriceImportAnswer }) {
  const { changes, errors, base_version } = props.preview;
  return (
    <div data-testid="price-import-result">
      {errors.length > 0 && (
        <div role="alert" className="error" data-testid="price-import-errors">
          <p>{errors.length} problem(s): nothing can be applied until the file is corrected.</p>
          <ul>
            {errors.map((e, i) => (
              <li key={i}>
                {e.row === 0 ? "The file" : `Row ${e.row}`}
                {e.model !== null && (
                  <>
                    {" "}
                    (<code>{e.model}</code>)
                  </>
                )}
                , {e.field}: {e.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {errors.length === 0 && changes.length === 0 && <p>No price changes: the file matches catalog version {base_version}.</p>}
      {changes.length > 0 && (
        <TableScroll label="Price changes">
          <table data-testid="price-import-changes">
            <caption>
              {changes.length} price change(s) against catalog version {base_version}
            </caption>
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Price</th>
                <th scope="col">Before</th>
                <th scope="col">After</th>
              </tr>
            </thead>
            <tbody>
              {changes.map((c) => (
                <tr key={`${c.model}/${c.price}`}>
                  <th scope="row">
                    <code>{c.model}</code>
                  </th>
                  <td>{c.price}</td>
                  <td>{c.before ?? "— (not set)"}</td>
                  <td>{c.after}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </div>
  );
}
