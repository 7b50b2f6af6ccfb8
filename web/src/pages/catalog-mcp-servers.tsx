// The Catalog page's MCP servers (docs/operations.md, "The live catalog"): the document's
// mcp_servers with their state and, editable, a dialog per server. Header and environment values are
// never shown (the document says only that each is set, with its last four characters at most); a
// value left empty in the form keeps the stored one ({"set": true}), a value typed replaces it.
import { useState } from "react";
import { api, type CatalogDocument } from "../api";
import { TableScroll } from "../components";
import { Dialog } from "../dialog";
import type { Run } from "./catalog-provider-keys";
import { EntryActions, EntryForm, Field, entryPath, optional, withoutNulls } from "./catalog-entity-forms";

interface Editing {
  version: number;
  run: Run;
  open: (kind: "mcp_server", name: string | null) => void;
}

type StoredValues = Record<string, { set: true; last4?: string }>;

const str = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : "");

/** "Authorization (set, …abcd)" for each stored value. */
function storedNames(values: unknown): string {
  const names = Object.entries((values ?? {}) as StoredValues).map(([name, v]) => `${name} (set${v.last4 ? `, …${v.last4}` : ""})`);
  return names.length === 0 ? "—" : names.join(", ");
}

export function McpServers(props: { document: CatalogDocument; edit?: Editing | undefined }) {
  const servers = Object.entries(props.document.mcp_servers ?? {});
  const edit = props.edit;
  return (
    <section aria-labelledby="catalog-mcp-title">
      <h2 id="catalog-mcp-title">MCP servers</h2>
      {edit && (
        <button type="button" className="primary" onClick={() => edit.open("mcp_server", null)}>
          Add MCP server
        </button>
      )}
      <p className="hint">The live catalog&apos;s servers, served after the config file&apos;s own. Stdio servers need mcp.allow_catalog_stdio in the config file.</p>
      <TableScroll label="MCP servers table">
        <table>
          <caption>{servers.length === 1 ? "1 MCP server" : `${servers.length} MCP servers`}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Transport</th>
              <th scope="col">Headers / env</th>
              <th scope="col">Price per call</th>
              <th scope="col">State</th>
              {edit && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {servers.map(([name, s]) => (
              <tr key={name}>
                <th scope="row">{name}</th>
                <td>
                  <code>{s.url !== undefined ? str(s.url) : `stdio: ${str(s.command)}`}</code>
                </td>
                <td>{storedNames(s.url !== undefined ? s.headers : s.env)}</td>
                <td>{s.price_per_call_usd !== undefined ? `$${str(s.price_per_call_usd)}` : "free"}</td>
                <td>{s.disabled === true ? <span className="badge bad">disabled</span> : <span className="badge enabled">enabled</span>}</td>
                {edit && (
                  <td>
                    <EntryActions kind="mcp_server" name={name} disabled={s.disabled === true} version={edit.version} run={edit.run} onEdit={() => edit.open("mcp_server", name)} />
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

/** "Name: value" lines; an existing name with nothing after the colon keeps its stored value. */
function valuesOf(text: string, label: string): Record<string, string | { set: true }> | null {
  const values: Record<string, string | { set: true }> = {};
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    const colon = line.indexOf(":");
    if (colon < 1) throw new Error(`${label}: write one "Name: value" a line.`);
    const value = line.slice(colon + 1).trim();
    values[line.slice(0, colon).trim()] = value === "" ? { set: true } : value;
  }
  return Object.keys(values).length === 0 ? null : values;
}

export function McpServerDialog(props: { name: string | null; document: CatalogDocument; version: number; onDone: (message: string) => void; onClose: () => void }) {
  const entry = props.name === null ? {} : (props.document.mcp_servers?.[props.name] ?? {});
  const [name, setName] = useState(props.name ?? "");
  const [url, setUrl] = useState(str(entry.url));
  const [command, setCommand] = useState(str(entry.command));
  const [args, setArgs] = useState(Array.isArray(entry.args) ? JSON.stringify(entry.args) : "");
  const namesOf = (values: unknown) =>
    Object.keys((values ?? {}) as StoredValues)
      .map((n) => `${n}:`)
      .join("\n");
  const [headers, setHeaders] = useState(namesOf(entry.headers));
  const [env, setEnv] = useState(namesOf(entry.env));
  const [price, setPrice] = useState(str(entry.price_per_call_usd));
  const save = () => {
    const parsedArgs: unknown = args.trim() === "" ? null : JSON.parse(args);
    const fields = {
      url: optional(url),
      headers: valuesOf(headers, "Headers"),
      command: optional(command),
      args: parsedArgs,
      env: valuesOf(env, "Environment"),
      price_per_call_usd: optional(price),
    };
    return props.name === null
      ? api("POST", "/admin/catalog/mcp-servers", { name: name.trim(), entry: withoutNulls(fields), base_version: props.version })
      : api("PATCH", entryPath("mcp_server", props.name), { set: fields, base_version: props.version });
  };
  return (
    <Dialog title={props.name === null ? "Add an MCP server" : `Edit MCP server ${props.name}`} onClose={props.onClose} testId="mcp-server-dialog">
      <EntryForm save={save} done={props.name === null ? `Added MCP server ${name.trim()}.` : `Saved MCP server ${props.name}.`} onDone={props.onDone} onClose={props.onClose}>
        {props.name === null && <Field label="Name" name="name" value={name} onChange={setName} required placeholder="tickets" />}
        <Field label="URL (a remote server)" name="url" type="url" value={url} onChange={setUrl} placeholder="https://mcp.example.com/mcp" />
        <label>
          Headers (one &quot;Name: value&quot; a line; an empty value keeps the stored one)
          <textarea name="headers" rows={3} value={headers} onChange={(event) => setHeaders(event.target.value)} spellCheck={false} />
        </label>
        <Field label="Command (a stdio server)" name="command" value={command} onChange={setCommand} />
        <Field label='Arguments (JSON, e.g. ["-y", "server"])' name="args" value={args} onChange={setArgs} />
        <label>
          Environment (one &quot;NAME: value&quot; a line; an empty value keeps the stored one)
          <textarea name="env" rows={3} value={env} onChange={(event) => setEnv(event.target.value)} spellCheck={false} />
        </label>
        <Field label="Price per call (USD)" name="price_per_call_usd" value={price} onChange={setPrice} placeholder="0.002" />
        <p className="hint">Header and environment values are stored encrypted and never shown again.</p>
      </EntryForm>
    </Dialog>
  );
}
