// POST /v1/messages/count_tokens: Anthropic's token counter, which Claude Code calls for exact
// context sizes (without it, it falls back to a character estimate). When the model's upstream
// counts itself (Anthropic's own endpoint), the request goes there with failover across keys and the
// upstream's number comes back; otherwise the gateway's documented estimate. Never billed: counting
// costs nothing upstream, so no hold is placed and no ledger row written.
import type { FastifyReply, FastifyRequest } from "fastify";
import { GatewayError } from "../errors/catalogue.js";
import { ClientAbortedError } from "../upstreams/upstream-client.js";
import { signedRequest } from "../upstreams/request.js";
import { upstreamOf } from "../upstreams/registry.js";
import { estimateMessagesPromptTokens } from "../formats/messages/messages-over-chat.js";
import { checkRequestBody, readModelField } from "../formats/fields.js";
import { countTokensRequestSchema } from "../formats/request-schemas.js";
import { forward, type Forwarded } from "./forward.js";
import { requestedModel } from "./admission.js";
import { cancelOnClientClose, countAttempts } from "./metered-call.js";
import type { PipelineServices } from "./services.js";
import { upstreamError } from "./upstream-errors.js";

/** Far above every context window; a larger count is not a count. */
const MAX_COUNT = 1_000_000_000;

export async function countMessagesTokens(services: PipelineServices, body: Record<string, unknown>, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  checkRequestBody(countTokensRequestSchema, body);
  const model = requestedModel(services, request, readModelField(body), "chat");
  // A routing group has no single upstream to ask: its deployments may count differently.
  const counter = model.group ? undefined : upstreamOf(model.provider).nativePlans.countTokens;
  if (!counter) return { input_tokens: estimateMessagesPromptTokens(body) };

  const { provider } = model;
  const plan = counter(body, model);
  const upstreamBody = JSON.stringify(plan.body);
  const { authenticate } = upstreamOf(provider);
  let forwarded: Forwarded;
  try {
    forwarded = await forward(services, request.principal.account.id, provider, {
      build: (key) => signedRequest(authenticate, provider, "POST", plan.path, key, upstreamBody, request.headers),
      awaitFirstChunk: false,
      signal: cancelOnClientClose(reply),
      onAttempt: countAttempts(request, reply),
    });
  } catch (error) {
    // The client went away: nobody reads the answer, and it is not the gateway's error.
    if (error instanceof ClientAbortedError) return { input_tokens: estimateMessagesPromptTokens(body) };
    throw error;
  }
  const { response, scrubber } = forwarded;
  const text = await response.body.text().catch(() => "");
  if (response.status < 200 || response.status >= 300) throw upstreamError(response.status, text, scrubber);
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new GatewayError("provider_error", "The upstream answered with a body that is not JSON.");
  }
  const count = (answer as { input_tokens?: unknown } | null)?.input_tokens;
  if (typeof answer !== "object" || answer === null || Array.isArray(answer) || !Number.isSafeInteger(count) || (count as number) < 0 || (count as number) > MAX_COUNT) {
    throw new GatewayError("provider_error", "The upstream's token count could not be read.");
  }
  request.meter.inputTokens = count as number;
  return scrubber.scrubJson(answer);
}
