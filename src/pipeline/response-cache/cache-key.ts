// The response cache's key (ADR 0044): sha256 of the normalised request. Every body field counts
// (sorted keys, so field order does not), with the model as the gateway resolved it, except the
// fields below, which do not change the answer; then the client format (the stored form is the
// client's: ADR 0044), how it is delivered (buffered, or the frames of a stream), and the scope:
// the account's id unless the setting shares answers gateway-wide.
import { createHash } from "node:crypto";

/** Body fields left out of the key: delivery, attribution and storage options, not the answer's content. */
export const FIELDS_NOT_IN_KEY: readonly string[] = [
  "model",
  "stream",
  "stream_options",
  "user",
  "metadata",
  "store",
  "safety_identifier",
  "prompt_cache_key",
  "prompt_cache_retention",
];

const SKIPPED = new Set(FIELDS_NOT_IN_KEY);

export type CacheDelivery = "buffered" | "stream";

export interface CacheKeyParts {
  /** The route's format ("chat", "responses", "messages", "generate_content", "embeddings"). */
  route: string;
  /** The model id as resolved (never the alias or the text the client sent). */
  modelId: string;
  body: Readonly<Record<string, unknown>>;
  delivery: CacheDelivery;
  /** The account id for `account` scope; null for `gateway` scope. */
  accountId: string | null;
  /**
   * The answer-side guardrails this request's key or workspace switched on (`applies: selected`):
   * an answer checked by other guardrails is not served to it. Absent or empty: none.
   */
  selectedGuardrails?: readonly string[];
}

/** JSON with object keys sorted at every depth: one text per value, whatever the field order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const fields = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function cacheKey(prefix: string, parts: CacheKeyParts): string {
  const kept: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(parts.body)) if (!SKIPPED.has(field)) kept[field] = value;
  const scope = parts.accountId === null ? "gateway" : `account:${parts.accountId}`;
  const guardrails = parts.selectedGuardrails !== undefined && parts.selectedGuardrails.length > 0 ? { guardrails: parts.selectedGuardrails } : {};
  const hash = createHash("sha256")
    .update(canonicalJson({ v: 1, route: parts.route, model: parts.modelId, delivery: parts.delivery, scope, body: kept, ...guardrails }))
    .digest("hex");
  return `${prefix}${hash}`;
}
