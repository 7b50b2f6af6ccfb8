// `gateway admin tag-budgets set|list|remove`: monthly budgets on request tags (docs/billing.md, "Tags
// and tag budgets"). Validation and the audited change are the admin API's. A running gateway reads a
// change within a second (its authentication cache's poll).
import { removeTagBudget, setTagBudget, tagBudgetBody, tagBudgetKeyQuery, tagBudgetListView, tagBudgetsJson } from "../../admin/tag-budgets.js";
import { parseWith } from "../../admin/validate.js";
import type { Store } from "../../store/index.js";
import { emit, parseCommand, table, UsageError, type CliIo } from "../io.js";
import { cliActor } from "./cli-actor.js";

const USAGE = "usage: gateway admin tag-budgets set TAG [--account ID] [--usd USD] [--tokens N] | list | remove TAG [--account ID]";

export async function tagBudgetsCommand(sub: string | undefined, args: string[], io: CliIo, store: Store): Promise<void> {
  switch (sub) {
    case "set": {
      const { values, positionals, json } = parseCommand(args, { account: { type: "string" }, usd: { type: "string" }, tokens: { type: "string" } }, ["TAG"]);
      const tokens = values.tokens as string | undefined;
      if (tokens !== undefined && !/^\d{1,15}$/.test(tokens)) throw new UsageError("--tokens: a whole number");
      const body = parseWith(tagBudgetBody, {
        tag: positionals[0],
        ...(values.account !== undefined && { account_id: values.account }),
        ...(values.usd !== undefined && { monthly_budget_usd: values.usd }),
        ...(tokens !== undefined && { monthly_token_budget: Number(tokens) }),
      });
      const now = Date.now();
      const [view] = await tagBudgetsJson(store, [await setTagBudget(store, cliActor(), body, now)], now);
      return emit(io, json, view, () => `budget on ${view!.tag} (${view!.account_id ?? "gateway-wide"}): ${view!.usd ?? "-"} USD, ${view!.tokens ?? "-"} tokens`);
    }
    case "list": {
      const { json } = parseCommand(args, {}, []);
      const list = await tagBudgetListView(store, Date.now());
      return emit(io, json, list.data, () =>
        table(list.data.map((b) => ({ tag: b.tag, account: b.account_id ?? "*", usd: b.usd, tokens: b.tokens, spent_usd: b.spent_usd, remaining_usd: b.remaining_usd }))),
      );
    }
    case "remove": {
      const { values, positionals, json } = parseCommand(args, { account: { type: "string" } }, ["TAG"]);
      const query = parseWith(tagBudgetKeyQuery, { tag: positionals[0], ...(values.account !== undefined && { account_id: values.account }) }, "query");
      const removed = await removeTagBudget(store, cliActor(), query);
      return emit(io, json, { deleted: true, scope: removed.scope }, () => `budget on ${removed.tag} removed`);
    }
    default:
      throw new UsageError(USAGE);
  }
}
