// An administrator credits or debits an account (its page, docs/dashboard.md "Administrators"): the
// amount and a required reason (the ledger row's note), then a confirmation that names the account,
// the amount as it will be booked and the balance it leads to, before anything is sent.
import { useState, type FormEvent } from "react";
import { api } from "../api";
import { formatMoney, Money } from "../components";
import { ConfirmDialog } from "../dialog";
import { sumMoney } from "../format";

/** A page's write action (useAction's run): resolves true when it succeeded. */
export type Run = (action: () => Promise<unknown>, done: string) => Promise<boolean>;

export function BalanceForm(props: { run: Run; path: string; email: string; balance: string }) {
  const [kind, setKind] = useState<"credit" | "debit">("credit");
  const [amount, setAmount] = useState("");
  const [reason, setReason] = useState("");
  const [confirming, setConfirming] = useState(false);
  const amountText = amount.trim();
  // Only a plain decimal can be shown back as money; the gateway judges the rest (and refuses it, naming the field).
  const readable = /^\d{1,9}(\.\d{1,9})?$/.test(amountText);
  const after = readable ? sumMoney([props.balance, kind === "credit" ? amountText : `-${amountText}`]) : null;

  function ask(event: FormEvent) {
    event.preventDefault();
    setConfirming(true);
  }

  async function book() {
    setConfirming(false);
    const done = await props.run(
      () => api("POST", `${props.path}/${kind}s`, { amount_usd: amountText, reason: reason.trim() }),
      `${kind === "credit" ? "Credited" : "Debited"} ${formatMoney(amountText || "0")}: ${reason.trim()}.`,
    );
    if (done) {
      setAmount("");
      setReason("");
    }
  }

  const verb = kind === "credit" ? "Credit" : "Debit";
  return (
    <form onSubmit={ask} aria-labelledby="balance-form-title">
      <h2 id="balance-form-title">Credit or debit</h2>
      <fieldset>
        <legend>Direction</legend>
        <div className="radio-row">
          <label>
            <input type="radio" name="kind" value="credit" checked={kind === "credit"} onChange={() => setKind("credit")} /> Credit (add)
          </label>
          <label>
            <input type="radio" name="kind" value="debit" checked={kind === "debit"} onChange={() => setKind("debit")} /> Debit (take)
          </label>
        </div>
      </fieldset>
      <label>
        Amount (USD)
        <input name="amount_usd" inputMode="decimal" required maxLength={20} value={amount} onChange={(e) => setAmount(e.target.value)} />
      </label>
      <label>
        Reason (required; shown in the ledger)
        <input name="reason" required maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} />
      </label>
      <button type="submit" className="primary" disabled={amountText === "" || reason.trim() === ""}>
        {kind === "credit" ? "Credit account" : "Debit account"}
      </button>
      {confirming && (
        <ConfirmDialog
          title={`${verb} ${readable ? formatMoney(amountText) : amountText} ${kind === "credit" ? "to" : "from"} ${props.email}?`}
          confirmLabel={`Yes, ${kind} ${readable ? formatMoney(amountText) : amountText}`}
          danger={kind === "debit"}
          onCancel={() => setConfirming(false)}
          onConfirm={() => void book()}
        >
          <p>
            {kind === "credit" ? "Add" : "Take"} <strong>{readable ? <Money usd={amountText} /> : amountText}</strong> {kind === "credit" ? "to" : "from"} the balance of{" "}
            <strong>{props.email}</strong>, with the reason “{reason.trim()}” in the ledger.
          </p>
          {after !== null && (
            <p>
              Balance now <Money usd={props.balance} />; afterwards <Money usd={after} testId="balance-after" />.
            </p>
          )}
        </ConfirmDialog>
      )}
    </form>
  );
}
