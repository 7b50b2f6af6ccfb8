// gw_batch's release operation (gw-batch-function.ts): the hold row deleted first, the per-request
// mutex (holds.ts). With expired_before (the sweeper) only a hold expired by then, or, with
// dead_holders, one whose holder has no liveness row alive then (gateway_processes, migration 0040,
// ADR 0054); not found: nothing is given back twice. Interpolated into gw_batch's operation loop.
export const RELEASE_DELETE = `
      delete from holds where id = op->>'hold' and (op->>'expired_before' is null or expires_at <= (op->>'expired_before')::bigint
          or (op ? 'dead_holders' and holds.holder is not null and not exists (select 1 from gateway_processes p
            where p.holder = holds.holder and p.expires_at > (op->>'expired_before')::bigint)))
        returning account_id, key_id, amount_nano, tokens, traffic, budgets into o_account, o_key, h_amount, h_tokens, h_traffic, h_budgets;
      if not found then
        answers := answers || jsonb_build_object('released', false);
        continue;
      end if;`;
