// Getting started with a key: copy-ready snippets (web/src/snippets.ts) with this gateway's base URL
// and a chat model the key may use. Shown under a new key with the raw key in them, and on the key's
// own page (/keys/:id/start) later with a placeholder, since the raw key is never stored.
import { useState } from "react";
import { api, type Key } from "../api";
import { ErrorText, Link, useLoad } from "../components";
import { gatewayBaseUrl, gettingStartedSnippets, KEY_ENV, KEY_PLACEHOLDER, type Snippet, type SnippetModel } from "../snippets";
import { loadModels, type ModelView } from "./models";

function snippetModel(model: ModelView): SnippetModel {
  return { id: model.id, maxOutputTokens: model.max_output_tokens };
}

/** The snippets for one key; `rawKey` null puts the placeholder where the key goes. */
export function GettingStarted(props: { keyId: string; rawKey: string | null }) {
  const models = useLoad(() => loadModels(props.keyId), [props.keyId]);
  const [chosen, setChosen] = useState<string | null>(null);
  if (models.error) return <ErrorText error={models.error} />;
  if (!models.data) return <p className="loading">Loading…</p>;
  const chat = models.data.data.filter((m) => m.kind === "chat");
  if (chat.length === 0) return <p>This key may use no chat model, so there is nothing to try it with here.</p>;
  const model = chat.find((m) => m.id === chosen) ?? chat[0]!;
  // Claude Code's Haiku slot: another chat model when there is one.
  const small = chat.find((m) => m.id !== model.id) ?? model;
  const snippets = gettingStartedSnippets({
    baseUrl: gatewayBaseUrl(models.data.public_url, window.location.origin),
    rawKey: props.rawKey,
    model: snippetModel(model),
    smallModel: snippetModel(small),
  });

  return (
    <div className="getting-started">
      <p>
        Every snippet reads the key from <code>{KEY_ENV}</code>.{" "}
        {props.rawKey ? (
          "The shell snippets set it to this key; keep them private."
        ) : (
          <>
            Replace <code>{KEY_PLACEHOLDER}</code> with the key you copied when you created it.
          </>
        )}
      </p>
      <label className="period">
        Model for the snippets
        <select value={model.id} onChange={(e) => setChosen(e.target.value)}>
          {chat.map((m) => (
            <option key={m.id} value={m.id}>
              {m.id}
            </option>
          ))}
        </select>
      </label>
      {snippets.map((snippet, index) => (
        <SnippetBlock key={snippet.id} snippet={snippet} open={index === 0} />
      ))}
    </div>
  );
}

function SnippetBlock(props: { snippet: Snippet; open: boolean }) {
  const { snippet } = props;
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState<unknown>(null);

  async function copy() {
    setError(null);
    try {
      await navigator.clipboard.writeText(snippet.code);
      setCopied(true);
    } catch {
      setError(new Error("The browser refused clipboard access; select the snippet and copy it by hand."));
    }
  }

  return (
    <details className="snippet" open={props.open} data-snippet={snippet.id}>
      <summary>{snippet.title}</summary>
      <p className="hint">{snippet.note}</p>
      <pre tabIndex={0} aria-label={`${snippet.title} snippet`}>
        <code data-testid={`snippet-${snippet.id}`}>{snippet.code}</code>
      </pre>
      <button type="button" onClick={() => void copy()} aria-label={`Copy the ${snippet.title} snippet`}>
        {copied ? "Copied" : "Copy"}
      </button>
      <ErrorText error={error} />
    </details>
  );
}

/** /keys/:id/start: the same snippets for a key created earlier, with the placeholder. */
export function GettingStartedPage(props: { id: string }) {
  const key = useLoad(() => api<{ key: Key }>("GET", `/keys/${encodeURIComponent(props.id)}`), [props.id]);
  const label = key.data ? key.data.key.name || key.data.key.prefix : props.id;
  return (
    <section aria-labelledby="start-title">
      <h1 id="start-title">Getting started with key {label}</h1>
      <p>
        <Link to="/">Back to keys</Link> · <Link to={`/models?key=${encodeURIComponent(props.id)}`}>Models this key may use</Link>
      </p>
      <ErrorText error={key.error} />
      {key.data && key.data.key.effective_status !== "enabled" && (
        <p className="error" role="alert">
          This key is {key.data.key.effective_status}: the gateway refuses it (or, exhausted, until its caps allow more). The snippets work with any enabled key.
        </p>
      )}
      {key.data && <GettingStarted keyId={props.id} rawKey={null} />}
    </section>
  );
}
