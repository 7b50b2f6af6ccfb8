// Card top-ups (docs/dashboard.md, "Card top-ups"): an amount within the operator's bounds, then the
// browser goes to Stripe's Checkout page. The balance grows only when Stripe's signed webhook arrives,
// so coming back says so rather than showing a credit that may not have landed yet.
import { useState, type FormEvent } from "react";
import { api } from "../api";
import { ErrorText, Notice, useLoad } from "../components";

interface TopupBounds {
  enabled: boolean;
  currency: string | null;
  min_usd: string | null;
  max_usd: string | null;
}

/** What Checkout's return address says (?topup=success|cancelled), read once. */
function returnNotice(): string | null {
  const state = new URLSearchParams(window.location.search).get("topup");
  if (state === "success") return "Payment received by Stripe: the credit appears in your balance once Stripe confirms it, usually within a minute.";
  if (state === "cancelled") return "The card payment was cancelled; nothing was charged.";
  return null;
}

export function TopupForm() {
  const bounds = useLoad(() => api<TopupBounds>("GET", "/topup"), []);
  const [amount, setAmount] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [notice] = useState(returnNotice);
  const b = bounds.data;
  if (!b?.enabled) return notice ? <Notice>{notice}</Notice> : null;

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const session = await api<{ url: string }>("POST", "/topup/checkout", { amount_usd: amount.trim() });
      window.location.assign(session.url);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }

  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} aria-label="Top up by card">
      <label>
        Amount (USD {b.min_usd} to {b.max_usd})
        <input name="amount" inputMode="decimal" value={amount} maxLength={12} autoComplete="off" placeholder={b.min_usd!} onChange={(e) => setAmount(e.target.value)} />
      </label>
      <button type="submit" className="primary" disabled={busy || amount.trim() === ""}>
        Top up by card
      </button>
      {notice && <Notice>{notice}</Notice>}
      <ErrorText error={error} />
    </form>
  );
}
