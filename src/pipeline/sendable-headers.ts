// The last check before a metered answer is charged: every header on the reply must be one Node
// will write. Each header the gateway makes is made safe where it is set (safeHeaderValue), so a
// refusal here is a defect; it becomes an uncharged error with X-Request-ID instead of a failure
// while writing an answer already paid for.
import type { FastifyReply, FastifyRequest } from "fastify";
import { unsendableHeaders } from "../core/header-value.js";
import { GatewayError } from "../errors/catalogue.js";
import type { MeteredCall } from "./metered-call.js";

export async function releaseUnlessHeadersSendable(call: MeteredCall, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const refused = unsendableHeaders(reply.getHeaders());
  if (refused.length === 0) return;
  await call.release();
  for (const name of refused) reply.removeHeader(name);
  request.log.error({ headers: refused }, "a response header could not be sent");
  throw new GatewayError("internal_error");
}
