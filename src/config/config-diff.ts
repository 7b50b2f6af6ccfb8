// What a reload changes in the catalog, by name: for the reload's answer, its log line and its
// audit row. Values are compared, never shown (a provider's keys are part of what is compared).
import type { GatewayConfig } from "./load.js";

export interface ReloadChanges {
  modelsAdded: string[];
  modelsRemoved: string[];
  modelsChanged: string[];
  providersAdded: string[];
  providersRemoved: string[];
  providersChanged: string[];
}

export function configChanges(before: GatewayConfig, after: GatewayConfig): ReloadChanges {
  const models = namedChanges(before.models, after.models);
  const providers = namedChanges(before.providers, after.providers);
  return {
    modelsAdded: models.added,
    modelsRemoved: models.removed,
    modelsChanged: models.changed,
    providersAdded: providers.added,
    providersRemoved: providers.removed,
    providersChanged: providers.changed,
  };
}

function namedChanges(before: ReadonlyMap<string, unknown>, after: ReadonlyMap<string, unknown>) {
  return {
    added: [...after.keys()].filter((name) => !before.has(name)),
    removed: [...before.keys()].filter((name) => !after.has(name)),
    changed: [...after.keys()].filter((name) => before.has(name) && comparable(before.get(name)) !== comparable(after.get(name))),
  };
}

/** A text equal for equal values: bigints, Maps and Sets included. */
function comparable(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "bigint") return `${v}n`;
    if (v instanceof Map) return [...(v as Map<unknown, unknown>).entries()];
    if (v instanceof Set) return [...(v as Set<unknown>).values()];
    return v;
  });
}
