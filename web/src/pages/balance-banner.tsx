// The account's balance where a person lands (the Keys page), with where credit comes from: a
// top-up code redeemed on the Usage page, or an administrator (docs/dashboard.md, "Keys").
import { api, type SessionInfo } from "../api";
import { ErrorText, Link, Money, useLoad } from "../components";

export function BalanceBanner() {
  // The session answer carries the account as it is now (the shell's copy is from sign-in).
  const session = useLoad(() => api<SessionInfo>("GET", "/session"), []);
  if (session.error) return <ErrorText error={session.error} />;
  const account = session.data?.account;
  if (!account) return null;
  const empty = !/[1-9]/.test(account.balance_usd) || account.balance_usd.startsWith("-");
  return (
    <section className={empty ? "balance-banner empty" : "balance-banner"} aria-labelledby="balance-title">
      <h2 id="balance-title">
        Balance: <Money usd={account.balance_usd} testId="landing-balance" />
      </h2>
      <p data-testid="get-credit">
        {empty ? "Your keys cannot make paid requests until you add credit. " : ""}
        To add credit, <Link to="/usage">redeem a top-up code</Link> on the Usage page
        {account.is_admin ? ", or credit an account from Accounts." : ", or ask your gateway's administrator for credit or a code."}
      </p>
    </section>
  );
}
