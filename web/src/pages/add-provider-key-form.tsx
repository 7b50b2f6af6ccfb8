// Adding an upstream provider key: an account's own (admin-account.tsx) or a shared key of the live
// catalog (catalog-provider-keys.tsx). The field hides what is typed, and the key leaves the page's
// state as soon as it is sent: it is never shown again.
import { useState, type FormEvent } from "react";
import { api } from "../api";
import type { Run } from "./admin-balance-form";

export function AddProviderKeyForm(props: { providers: readonly string[]; url: string; run: Run; label: string }) {
  const [provider, setProvider] = useState("");
  const [secret, setSecret] = useState("");
  const [label, setLabel] = useState("");
  const chosen = provider || props.providers[0] || "";

  async function submit(event: FormEvent) {
    event.preventDefault();
    const body = { provider: chosen, key: secret, ...(label.trim() && { label: label.trim() }) };
    setSecret("");
    if (await props.run(() => api("POST", props.url, body), `Added a ${chosen} key; it will not be shown again.`)) setLabel("");
  }

  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} aria-label={props.label}>
      <label>
        Provider
        <select name="provider" value={chosen} onChange={(e) => setProvider(e.target.value)}>
          {props.providers.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
      </label>
      <label>
        Provider API key
        <input name="key" type="password" autoComplete="off" required minLength={8} maxLength={4096} value={secret} onChange={(e) => setSecret(e.target.value)} />
      </label>
      <label>
        Label (optional)
        <input name="label" maxLength={100} value={label} onChange={(e) => setLabel(e.target.value)} />
      </label>
      <button type="submit" className="primary" disabled={secret.length < 8 || chosen === ""}>
        Add provider key
      </button>
    </form>
  );
}
