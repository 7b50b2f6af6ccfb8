// A workspace's budgets and allowed models (docs/billing.md, "Workspace and member budgets"): every
// member sees the workspace's budget, each member's spend this month and the models; owners and admins
// change them (an empty field removes that limit).
import { useState, type FormEvent } from "react";
import { api, type BudgetUse, type WorkspaceBudgets } from "../api";
import { GuardrailChooser } from "./guardrail-chooser";
import { ErrorText, formatDate, formatMoney, Money, Notice, TableScroll, useAction, useLoad } from "../components";

function limitText(use: BudgetUse): string {
  const parts: string[] = [];
  if (use.usd !== null) parts.push(`${formatMoney(use.usd)} (${use.remaining_usd === null ? "no limit" : formatMoney(use.remaining_usd)} left)`);
  if (use.tokens !== null) parts.push(`${use.tokens} tokens (${use.remaining_tokens} left)`);
  return parts.length === 0 ? "no limit" : parts.join(", ");
}

export function WorkspaceBudgetsSection(props: { base: string; manager: boolean }) {
  const budgets = useLoad(() => api<WorkspaceBudgets>("GET", `${props.base}/budgets`), [props.base]);
  const { error, status, run } = useAction(() => budgets.reload());
  const b = budgets.data;
  return (
    <section aria-labelledby="budgets-title">
      <h2 id="budgets-title">Budgets</h2>
      <ErrorText error={budgets.error ?? error} />
      {status && <Notice>{status}</Notice>}
      {b && (
        <>
          <p data-testid="workspace-budget">
            {b.month} (resets {formatDate(b.resets_at)}): workspace budget {limitText(b.budget)}; spent {formatMoney(b.budget.spent_usd)}, {formatMoney(b.budget.held_usd)} held in
            flight. Member budget: {b.member_monthly_budget_usd === null ? "no limit" : `${formatMoney(b.member_monthly_budget_usd)} each`}. Models:{" "}
            {b.allowed_models === null ? "every model of the tier" : b.allowed_models.join(", ")}. Guardrails switched on:{" "}
            {(b.guardrails ?? []).length === 0 ? "none beyond the operator's" : (b.guardrails ?? []).join(", ")}.
          </p>
          <h3 id="models-title">Models</h3>
          {b.allowed_models === null ? (
            <p data-testid="workspace-models">Every model of each member's tier (no list set).</p>
          ) : (
            <ul aria-labelledby="models-title" data-testid="workspace-models">
              {b.allowed_models.map((m) => (
                <li key={m}>
                  <code>{m}</code>
                </li>
              ))}
            </ul>
          )}
          <TableScroll label="Spend per member table">
            <table>
              <caption>Spend per member this month</caption>
              <thead>
                <tr>
                  <th scope="col">Member</th>
                  <th scope="col">Spent (USD)</th>
                  <th scope="col">Held (USD)</th>
                  <th scope="col">Member budget (USD)</th>
                  <th scope="col">Left (USD)</th>
                </tr>
              </thead>
              <tbody>
                {b.members.map((m) => (
                  <tr key={m.account_id} data-testid={`member-spend-${m.account_id}`}>
                    <th scope="row">{m.email}</th>
                    <td className="num">
                      <Money usd={m.budget.spent_usd} />
                    </td>
                    <td className="num">
                      <Money usd={m.budget.held_usd} />
                    </td>
                    <td className="num">{m.budget.usd === null ? "no limit" : <Money usd={m.budget.usd} />}</td>
                    <td className="num">{m.budget.remaining_usd === null ? "—" : <Money usd={m.budget.remaining_usd} />}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          {props.manager && <BudgetsForm current={b} onSave={(body) => run(() => api("PATCH", `${props.base}/budgets`, body), "Budgets saved.")} />}
        </>
      )}
    </section>
  );
}

function BudgetsForm(props: { current: WorkspaceBudgets; onSave: (body: Record<string, unknown>) => Promise<boolean> }) {
  const c = props.current;
  const [usd, setUsd] = useState(c.budget.usd ?? "");
  const [tokens, setTokens] = useState(c.budget.tokens === null ? "" : String(c.budget.tokens));
  const [member, setMember] = useState(c.member_monthly_budget_usd ?? "");
  const [models, setModels] = useState((c.allowed_models ?? []).join(", "));
  const [guardrails, setGuardrails] = useState(c.guardrails ?? []);

  async function save(event: FormEvent) {
    event.preventDefault();
    const list = models
      .split(",")
      .map((m) => m.trim())
      .filter((m) => m !== "");
    await props.onSave({
      monthly_budget_usd: usd.trim() === "" ? null : usd.trim(),
      monthly_token_budget: tokens.trim() === "" ? null : Number(tokens.trim()),
      member_monthly_budget_usd: member.trim() === "" ? null : member.trim(),
      allowed_models: list.length === 0 ? null : list,
      guardrails,
    });
  }

  return (
    <form className="inline-form" onSubmit={(event) => void save(event)} aria-label="Set the workspace's budgets">
      <label>
        Monthly budget (USD)
        <input name="monthly_budget_usd" inputMode="decimal" value={usd} onChange={(e) => setUsd(e.target.value)} />
      </label>
      <label>
        Monthly tokens
        <input name="monthly_token_budget" inputMode="numeric" value={tokens} onChange={(e) => setTokens(e.target.value)} />
      </label>
      <label>
        Per member (USD)
        <input name="member_monthly_budget_usd" inputMode="decimal" value={member} onChange={(e) => setMember(e.target.value)} />
      </label>
      <label>
        Allowed models (comma-separated; empty: all)
        <input name="allowed_models" value={models} onChange={(e) => setModels(e.target.value)} />
      </label>
      <GuardrailChooser chosen={guardrails} onChange={setGuardrails} label="Workspace guardrails" />
      <button type="submit" className="primary">
        Save budgets
      </button>
    </form>
  );
}
