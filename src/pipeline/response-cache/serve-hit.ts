// A response-cache hit on a chat route (chat, Responses, Messages, Gemini), answered in the client's
// format as it was stored: a buffered body, or a stream's frames written as a stream again (the same
// events in the same order), with the hit's charge in usage.cost and x-gateway-cost-usd.
import type { FastifyReply, FastifyRequest } from "fastify";
import { formatUsd } from "../../core/money.js";
import type { ClientFormat } from "../../formats/client-format.js";
import type { MeteredRequest } from "../metered-call.js";
import { jsonArrayEncoder, sseEncoder } from "../relay.js";
import type { PipelineServices } from "../services.js";
import { bufferedHitBody, chargeHit, streamHitFrames } from "./cache-stage.js";
import type { CacheEntry } from "./response-cache.js";

export async function serveHit(
  services: PipelineServices,
  request: FastifyRequest,
  reply: FastifyReply,
  metered: MeteredRequest,
  entry: CacheEntry,
  format: ClientFormat,
): Promise<void> {
  const cost = await chargeHit(services, request, reply, metered, entry);
  request.meter.responseModel = entry.modelId;
  if (entry.kind === "stream") {
    const encoder = format.streamEncoding === "json_array" ? jsonArrayEncoder() : sseEncoder();
    reply.hijack();
    request.meter.firstByteAt = performance.now();
    reply.raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": encoder.contentType,
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    // Scrubbed when stored (with the keys the serving call knew); scrubbed again on the way out.
    reply.raw.end(encoder.frames(streamHitFrames(entry, cost), services.scrubber) + encoder.close());
    return;
  }
  if (entry.kind !== "buffered") throw new Error(`a ${entry.kind} cache entry on a chat route`);
  reply.header("x-gateway-cost-usd", formatUsd(cost));
  await reply.code(200).header("content-type", "application/json").send(bufferedHitBody(entry, cost));
}
