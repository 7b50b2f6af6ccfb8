// PostgreSQL's part of the balance escrow (migration 0039, ADR 0048; src/billing/escrow-postgres.ts):
// PL/pgSQL fragments that gw_batch (gw-batch-function.ts) inlines. Every change to an escrow row is
// made under the account's row lock, in the same statement as the change to accounts.held_nano it
// mirrors, so held_nano always equals the holds plus the slices out, and a slice only ever comes
// out of balance - held: the account cannot go below zero by it.
//
// The escrow operation (fields: account, holder, want, least, now, expires, trim, give, expired_before):
//   trim false: a refill, up to `want` in all, taking at most half of what is available (so that one
//     holder never takes the last of the balance), nothing when that half is less than `least` (one
//     request's amount: near the end of a balance every admission is central and exact), while a
//     recall is pending, or when the account is not plain (suspended, or a monthly budget: central);
//   trim true: give back down to `want` (0: all), or, with `give`, that much: what the holder counts
//     beyond its requests in flight (a settlement committed just before the trim already took its
//     hold's amount out, so "down to" would strand that much in a recalled slice). Answers a recall.
//     With expired_before (the sweeper): only when the lease has run out.
// A settlement of a hold admitted from a slice (field escrow: the holder, escrow_amount: the hold's
// amount) takes that amount out of the slice and out of held_nano, after its ledger row was written.
// A refusal for the balance asks the other slices back (recall 1) and answers how many are pending:
// the caller admits again once they answered (StoreBilling), so a slice never makes a false refusal.

/** gw_batch's declarations for the escrow fragments. */
export const ESCROW_DECLARATIONS = `
  e_amount bigint;
  e_expires bigint;
  e_recall integer;
  e_new bigint;
  e_count integer := 0;`;

/** The account and key need nothing checked but the balance: an admission may come from a slice. */
export const ESCROW_PLAIN = `coalesce(a_status = 'active' and a_budget is null and a_token_budget is null and k_found and k_status = 'enabled'
            and k_budget is null and k_token_cap is null and k_pbudget is null and k_ptoken_cap is null, false)`;

/** The escrow operation, the account locked (acc, acc_found, a_*). */
export const ESCROW_OP = `
      select amount_nano, expires_at, recall into e_amount, e_expires, e_recall
        from account_escrows where account_id = acc and holder = op->>'holder' for update;
      if not found then e_amount := 0; e_expires := null; e_recall := 0; end if;
      if not acc_found or (op ? 'expired_before' and (e_expires is null or e_expires > (op->>'expired_before')::bigint)) then
        answers := answers || jsonb_build_object('granted', '0', 'amount', e_amount::text, 'plain', false);
        continue;
      end if;
      e_new := (op->>'want')::bigint;
      if (op->>'trim')::boolean then
        if op ? 'give' then e_new := e_amount - least(e_amount, (op->>'give')::bigint); end if;
        e_new := greatest(0, least(e_new, e_amount));
        if e_recall = 1 then e_recall := 2; end if;
      elsif e_recall = 1 or a_status <> 'active' or a_budget is not null or a_token_budget is not null
          or (a_balance - a_held) / 2 < coalesce((op->>'least')::bigint, 0) then
        e_new := e_amount;
      else
        e_new := e_amount + greatest(0, least(e_new - e_amount, (a_balance - a_held) / 2));
        if e_new > e_amount then e_recall := 0; end if;
      end if;
      if e_new <> e_amount then
        a_held := a_held + (e_new - e_amount);
        a_dirty := true;
      end if;
      if e_new = 0 then
        delete from account_escrows where account_id = acc and holder = op->>'holder';
      else
        insert into account_escrows as e (account_id, holder, amount_nano, expires_at, recall)
          values (acc, op->>'holder', e_new, (op->>'expires')::bigint, e_recall)
          on conflict (account_id, holder) do update set amount_nano = excluded.amount_nano, expires_at = excluded.expires_at, recall = excluded.recall;
      end if;
      answers := answers || jsonb_build_object('granted', (e_new - e_amount)::text, 'amount', e_new::text,
        'plain', a_status = 'active' and a_budget is null and a_token_budget is null);`;

/** In a settlement, after its ledger row was written: the hold came from the holder's slice. */
export const ESCROW_SETTLE = `
      if op ? 'escrow' then
        update account_escrows set amount_nano = amount_nano - (op->>'escrow_amount')::bigint
          where account_id = acc and holder = op->>'escrow' and amount_nano >= (op->>'escrow_amount')::bigint;
        if found then a_held := a_held - (op->>'escrow_amount')::bigint; end if;
      end if;`;

/** A refusal for the balance: ask the live slices back; e_count: how many are still to answer. */
export const ESCROW_RECALL = `
      e_count := 0;
      if v_refusal = 'insufficient_balance' then
        update account_escrows set recall = 1 where account_id = acc and recall = 0 and amount_nano > 0 and expires_at > (op->>'now')::bigint;
        select count(*) into e_count from account_escrows where account_id = acc and recall = 1 and expires_at > (op->>'now')::bigint;
      end if;`;
