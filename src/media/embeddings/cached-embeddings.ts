// /v1/embeddings and the response cache (ADR 0044): the scrubbed list is stored as text with the
// placeholder of its cost still in it, so a hit is that text with the hit's charge put in place.
import type { FastifyReply, FastifyRequest } from "fastify";
import { formatUsd, type Nano } from "../../core/money.js";
import type { Usage } from "../../core/usage.js";
import type { MeteredRequest } from "../../pipeline/metered-call.js";
import { chargeHit } from "../../pipeline/response-cache/cache-stage.js";
import type { CacheEntry } from "../../pipeline/response-cache/response-cache.js";
import type { PipelineServices } from "../../pipeline/services.js";
import type { ScrubbedBody } from "../images/base64-payloads.js";

export function embeddingsEntry(scrubbed: ScrubbedBody, usage: Usage, cost: Nano, modelId: string): CacheEntry {
  return {
    kind: "embeddings",
    text: Buffer.concat(scrubbed.parts).toString("utf8"),
    placeholder: scrubbed.costSlot?.placeholder ?? null,
    usage,
    costNano: String(cost),
    modelId,
  };
}

export async function serveEmbeddingsHit(services: PipelineServices, request: FastifyRequest, reply: FastifyReply, metered: MeteredRequest, entry: CacheEntry): Promise<void> {
  if (entry.kind !== "embeddings") throw new Error(`a ${entry.kind} cache entry on /v1/embeddings`);
  const cost = await chargeHit(services, request, reply, metered, entry);
  const text = formatUsd(cost);
  const body = entry.placeholder === null ? entry.text : entry.text.replace(entry.placeholder, JSON.stringify(text));
  await reply.code(200).header("content-type", "application/json").header("x-gateway-cost-usd", text).send(body);
}
