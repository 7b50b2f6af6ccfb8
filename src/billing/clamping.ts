// Clamping (docs/billing.md, "Clamping"; docs/decisions/0010-output-clamping.md): the largest output
// token count an admission refused by a money or token limit could still be granted, from the
// headroom that refusal reported. Priced through projectCost, never by its own arithmetic, so that
// every pricing rule (tiers, dimensions) that shapes the hold shapes the clamp the same way.
import type { ModelConfig } from "../core/catalog.js";
import type { Headroom } from "./admission.js";
import { projectCost } from "./pricing.js";
import type { AdmissionRequest } from "./types.js";

/**
 * The most output tokens, from 0 to request.projectedOutputTokens, whose hold fits every limit of
 * `headroom` for each of `models` (a routing group's deployments; the hold is placed for the dearest
 * of them at that count, which then fits too). -1 when not even the prompt alone fits.
 */
export function coveredOutputTokens(request: AdmissionRequest, models: readonly ModelConfig[], headroom: Headroom): number {
  const costRoom = minOf([headroom.balance, headroom.monthCost, headroom.keyCost, headroom.periodCost, headroom.budgetCost]);
  const tokenRoom = minOf([headroom.monthTokens, headroom.keyTokens, headroom.periodTokens, headroom.budgetTokens]);
  let most = request.projectedOutputTokens;
  if (tokenRoom !== null) {
    const room = tokenRoom - BigInt(Math.ceil(request.projectedInputTokens));
    if (room < 0n) return -1;
    if (room < BigInt(most)) most = Number(room);
  }
  for (const model of models) {
    const fits = (outputTokens: number) => costRoom === null || projectCost({ ...request, model, projectedOutputTokens: outputTokens }) <= costRoom;
    if (!fits(0)) return -1;
    if (fits(most)) continue;
    // projectCost grows with the output count: the largest count that fits, by bisection.
    let low = 0;
    let high = most;
    while (high - low > 1) {
      const middle = low + Math.floor((high - low) / 2);
      if (fits(middle)) low = middle;
      else high = middle;
    }
    most = low;
  }
  return most;
}

function minOf(values: ReadonlyArray<bigint | null>): bigint | null {
  let least: bigint | null = null;
  for (const value of values) if (value !== null && (least === null || value < least)) least = value;
  return least;
}
