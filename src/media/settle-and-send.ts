// The end of the buffered media routes (images, embeddings): the answer is read whole and settled
// before anything is sent, so a truncated or invalid answer is never billed or delivered with a 200.
import { Readable } from "node:stream";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Cancellation } from "../core/cancellation.js";
import { formatUsd } from "../core/money.js";
import type { Usage } from "../core/usage.js";
import type { MeteredCall } from "../pipeline/metered-call.js";
import { releaseUnlessHeadersSendable } from "../pipeline/sendable-headers.js";
import { setRateLimitHeaders } from "../pipeline/traffic.js";
import type { Route } from "../billing/types.js";
import { withCost, type ScrubbedBody } from "./images/base64-payloads.js";

/**
 * The end of a buffered media route: read the answer (a failure releases the hold and is thrown,
 * or, when the client left, answers undefined), settle it before anything is sent (a failed
 * settlement is a 502 and nothing is charged), then send it with its cost and rate-limit headers.
 */
export async function settleAndSend(
  call: MeteredCall,
  request: FastifyRequest,
  reply: FastifyReply,
  cancellation: Cancellation,
  read: () => Promise<{ scrubbed: ScrubbedBody; usage: Usage }>,
  route: Route,
): Promise<FastifyReply | undefined> {
  setRateLimitHeaders(reply, call.hold, route);
  let answer: { scrubbed: ScrubbedBody; usage: Usage };
  try {
    answer = await read();
  } catch (error) {
    await call.release();
    if (cancellation.aborted) return undefined;
    throw error;
  }
  const { scrubbed, usage } = answer;
  await releaseUnlessHeadersSendable(call, request, reply);
  const charge = await call.settle(usage);
  request.meter.usage = usage;
  request.meter.inputTokens = usage.inputTokens;
  request.meter.outputTokens = usage.outputTokens;
  request.meter.costNano = charge.cost;
  const cost = formatUsd(charge.cost);
  // The cost in the body's usage object too (usage.cost), when the body has one.
  const body = withCost(scrubbed, cost);
  reply.code(200).header("content-type", "application/json").header("content-length", String(body.length)).header("x-gateway-cost-usd", cost);
  return reply.send(Readable.from(body.parts));
}
