// gateway_guardrail_decisions_total{guardrail, side, action}: one per request, guardrail and side
// that ran (pass included), counted when the request is recorded. Labels are configured names.
import type { Registry } from "prom-client";

export class GuardrailMetrics {
  readonly #counts = new Map<string, { guardrail: string; side: string; action: string; count: number }>();

  register(registry: Registry): void {
    const name = "gateway_guardrail_decisions_total";
    const help = "Guardrail decisions, by guardrail, side (request or response) and action (pass, log, mask, block, error).";
    const get = () => ({
      name,
      help,
      type: "counter",
      aggregator: "sum",
      values: [...this.#counts.values()].map((c) => ({ labels: { guardrail: c.guardrail, side: c.side, action: c.action }, value: c.count })),
    });
    registry.registerMetric({ name, help, type: "counter", aggregator: "sum", get } as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  observe(guardrail: string, side: string, action: string): void {
    const key = `${guardrail}\u0000${side}\u0000${action}`;
    const entry = this.#counts.get(key);
    if (entry === undefined) this.#counts.set(key, { guardrail, side, action, count: 1 });
    else entry.count += 1;
  }
}
