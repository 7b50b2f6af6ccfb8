// The request path of every model route, as named stages:
//   authenticate (onRequest hook, before the body is read) -> read body -> resolve model ->
//   check tier -> plan -> response cache (a hit is served and metered there: response-cache/) ->
//   admit (hold) and forward with failover (metered-call.ts) -> relay (scrub,
//   meter) -> settle: a buffered answer before it is sent, a stream at its end.
//   Guardrails (guardrails/stage.ts) run after the model is resolved, before planning, on the
//   client's body, and again on the answer, buffered or streamed.
// Each stage throws a GatewayError; the HTTP edge renders it in the route's native shape.
import type { FastifyReply, FastifyRequest } from "fastify";
import { estimateTextTokens } from "../billing/estimate-tokens.js";
import type { ModelConfig } from "../core/catalog.js";
import type { Cancellation } from "../core/cancellation.js";
import { safeHeaderValue } from "../core/header-value.js";
import { formatUsd } from "../core/money.js";
import { plausibleUsage, type Usage } from "../core/usage.js";
import { GatewayError, invalidRequest, renderError } from "../errors/catalogue.js";
import { signedRequest } from "../upstreams/request.js";
import { upstreamOf } from "../upstreams/registry.js";
import type { ClientFormat } from "../formats/client-format.js";
import type { FrameEncoder } from "./relay.js";
import { checkOutputTokenLimits } from "../formats/fields.js";
import { admissionFor, requestedModel } from "./admission.js";
import { openMeteredCall, type MeteredCall, type MeteredRequest } from "./metered-call.js";
import { cancelOnClientClose } from "./client-departure.js";
import { lookUpAnswer, storableFrames, storeAnswer, type CacheLookup } from "./response-cache/cache-stage.js";
import { RecordingTranslator } from "./response-cache/recording-translator.js";
import { serveHit } from "./response-cache/serve-hit.js";
import { stopAtOutputLimit } from "./output-limit.js";
import type { ClientRequestInfo, UpstreamPlan } from "../upstreams/plan.js";
import { CostInBandStream, withCost } from "./in-band-cost.js";
import { jsonArrayEncoder, pumpStream, scrubValue, sseEncoder } from "./relay.js";
import { scrubHeaders } from "./scrub.js";
import { releaseUnlessHeadersSendable } from "./sendable-headers.js";
import type { PipelineServices } from "./services.js";
import { setRateLimitHeaders } from "./traffic.js";
import { recordClientGone, recordRequest } from "./request-context.js";
import { guardAnswer, guardRequest, guardrailError, guardStream, storedAnswerMask } from "./guardrails/stage.js";

export async function handleModelRequest(services: PipelineServices, format: ClientFormat, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const sent = readBody(request.body);
  const info = format.describe(sent);
  const model = requestedModel(services, request, info.model, "chat", (resolved) => checkOutputTokenLimits(info.outputTokenFields, resolved));
  // Every plan (and clamping, and each deployment of a group) starts from the body the guardrails passed.
  const body = await guardRequest(services, request, sent);
  const planContext = { accountId: request.principal.account.id, requestId: request.id };
  // Planned first for the body as sent (its validation errors come before admission); planned again
  // when clamping lowered the output limit (metered-call.ts), from the body with the lowered limit.
  let plan = await format.plan(body, model, planContext);
  if (plan.warnings.length > 0) reply.header("x-gateway-warnings", safeHeaderValue(plan.warnings.join("; ")));

  const provider = model.provider;
  const upstream = upstreamOf(provider);
  const cancellation = cancelOnClientClose(reply);
  // A routing group plans each deployment it attempts (its provider decides the upstream API).
  const deploymentPlans = model.group ? new Map<ModelConfig, UpstreamPlan>() : null;
  const requestFor = (sent: Record<string, unknown>, sentPlan: UpstreamPlan) => {
    const upstreamBody = JSON.stringify(sentPlan.body);
    return {
      build: (key: string) => signedRequest(upstream.authenticate, provider, "POST", sentPlan.path, key, upstreamBody, request.headers),
      planFor: deploymentPlans
        ? async (deployment: ModelConfig) => {
            const deploymentPlan = await format.plan(sent, deployment, planContext);
            deploymentPlans.set(deployment, deploymentPlan);
            const deploymentBody = JSON.stringify(deploymentPlan.body);
            const { authenticate } = upstreamOf(deployment.provider);
            return (key: string) => signedRequest(authenticate, deployment.provider, "POST", deploymentPlan.path, key, deploymentBody, request.headers);
          }
        : undefined,
    };
  };
  const metered: MeteredRequest = {
    ...admissionFor(services, request, reply, {
      model,
      route: format.route,
      projectedInputTokens: info.promptTokens,
      projectedOutputTokens: Math.max(info.maxOutputTokens ?? model.defaultOutputTokens, plan.outputLimit ?? 0),
    }),
    ...requestFor(body, plan),
    awaitFirstChunk: plan.stream,
    signal: cancellation,
    clamp: {
      minOutputTokens: services.config.billing.clampMinOutputTokens,
      limitOutput: async (outputTokens) => {
        const limited = format.limitOutput(body, outputTokens);
        if (!deploymentPlans) plan = await format.plan(limited, model, planContext);
        return requestFor(limited, plan);
      },
    },
  };
  const cached = await lookUpAnswer(services, request, reply, { route: format.route, modelId: model.id, body, delivery: plan.stream ? "stream" : "buffered" });
  // A client gone meanwhile is not served a hit it would be charged for: openMeteredCall returns null.
  if (cached?.entry && !cancellation.aborted) return serveHit(services, request, reply, metered, cached.entry, format);
  const call = await openMeteredCall(services, metered);
  if (call === null) {
    // The client went away: nothing held, nobody to answer.
    recordClientGone(request, services);
    return;
  }
  setRateLimitHeaders(reply, call.hold, format.route);
  // Only an answer served with the lowered limit says so; a refusal or a failed upstream does not.
  if (call.clampedOutputTokens !== null) reply.header("x-gateway-max-tokens-clamped", String(call.clampedOutputTokens));
  const servingPlan = deploymentPlans ? deploymentPlans.get(call.hold.model) : plan;
  if (!servingPlan) {
    await call.release();
    throw new GatewayError("internal_error");
  }
  const { deployment } = call.hold.model;
  request.meter.responseModel = call.hold.model.upstreamModel;
  if (deployment !== undefined) {
    request.meter.provider = call.hold.model.provider.name;
    request.meter.deployment = deployment;
    reply.header("x-gateway-deployment", safeHeaderValue(deployment));
    // What the serving deployment's plan dropped, not what the first plan (for validation) did.
    if (servingPlan.warnings.length > 0) reply.header("x-gateway-warnings", safeHeaderValue(servingPlan.warnings.join("; ")));
    else reply.removeHeader("x-gateway-warnings");
  }

  const passHeaders = scrubHeaders(call.upstream.response.headers);
  delete passHeaders["content-type"];
  reply.headers(passHeaders);

  await releaseUnlessHeadersSendable(call, request, reply);
  const storedMask = storedAnswerMask(services, request);
  if (storedMask !== null) servingPlan.beforeStore = storedMask;

  // A clamped answer is shorter than the request asked for: not stored for the next one.
  const store = cached !== null && call.clampedOutputTokens === null ? { services, lookup: cached, modelId: model.id } : null;
  if (servingPlan.stream) return relayStream(services, request, reply, { plan: servingPlan, info, call, signal: cancellation, format, store });
  return relayBuffered(services, request, reply, { plan: servingPlan, info, call, store });
}

function readBody(body: unknown): Record<string, unknown> {
  if (!body || typeof body !== "object" || Array.isArray(body)) throw invalidRequest("body", "The request body must be a JSON object.");
  return body as Record<string, unknown>;
}

interface RelayInput {
  plan: UpstreamPlan;
  info: ClientRequestInfo;
  call: MeteredCall;
  /** Where the answer is stored once settled and complete (a response-cache miss); null: not stored. */
  store: { services: PipelineServices; lookup: CacheLookup; modelId: string } | null;
}

async function relayBuffered(services: PipelineServices, request: FastifyRequest, reply: FastifyReply, input: RelayInput): Promise<void> {
  const { plan, info, call } = input;
  const { response, scrubber } = call.upstream;
  let answer: unknown;
  let usage: Usage;
  try {
    const text = await response.body.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new GatewayError("provider_error", "The upstream answered with a body that is not JSON.");
    }
    const converted = plan.fromUpstream(json);
    answer = converted.body;
    // Usage with an implausible count (1e30, negative) is treated as missing: see plausibleUsage.
    usage = plausibleUsage(converted.usage) ?? estimateUsage(info, JSON.stringify(answer));
  } catch (error) {
    await call.release();
    throw error instanceof GatewayError ? error : new GatewayError("provider_error", "The upstream answer could not be read.");
  }
  // Guardrails before the scrubber, as on a stream (whose frames are scrubbed as they are encoded):
  // a provider key in the answer is masked with its guardrail's label, not the scrubber's.
  let scrubbed: unknown;
  try {
    const guarded = await guardAnswer(services, request, answer);
    if (guarded.blocked) {
      await settleBlockedAnswer(services, request, call, usage);
      throw guardrailError(guarded.blocked, "response");
    }
    scrubbed = scrubValue(scrubber, guarded.value);
  } catch (error) {
    if (!(error instanceof GatewayError && error.type === "guardrail_blocked")) await call.release();
    throw error;
  }
  try {
    await plan.complete?.();
  } catch (error) {
    // The gateway's own step (storing a response), not the upstream's answer.
    await call.release();
    throw error instanceof GatewayError ? error : new GatewayError("internal_error");
  }
  // Settled before anything is sent: a failed settlement is a 502 and nothing is charged. Its hold is
  // given back in the background (at once if the database answers): a release after a settlement
  // that did commit changes nothing.
  const charge = await call.settle(usage).catch((error: unknown) => {
    services.settlementRetries.releaseLater(call.hold);
    throw error;
  });
  meter(request, usage, charge.cost);
  const { store } = input;
  if (store !== null) storeAnswer(store.services, store.lookup, { kind: "buffered", body: scrubbed, usage, costNano: String(charge.cost), modelId: store.modelId });
  const cost = formatUsd(charge.cost);
  reply.header("x-gateway-cost-usd", cost);
  // The cost goes in after scrubbing: it is the gateway's own text, not the upstream's.
  reply
    .code(200)
    .header("content-type", "application/json")
    .send(JSON.stringify(withCost(scrubbed, "usage", cost)));
}

async function relayStream(
  services: PipelineServices,
  request: FastifyRequest,
  reply: FastifyReply,
  input: RelayInput & { signal: Cancellation; format: ClientFormat },
): Promise<void> {
  reply.hijack();
  const encoder = input.format.streamEncoding === "json_array" ? jsonArrayEncoder() : sseEncoder();
  try {
    await pumpAndSettle(services, request, reply, { ...input, encoder });
  } catch (error) {
    // Past hijack() Fastify renders nothing: whatever went wrong, the client gets an answer in its
    // format and the connection ends. Before the head: nothing was delivered, nothing is charged.
    services.logger.error({ request_id: request.id, err: error }, "the stream failed in the gateway");
    const raw = reply.raw;
    request.meter.errorType = "internal_error";
    request.meter.errorMessage = "Internal error.";
    if (raw.destroyed || raw.writableEnded) return;
    if (!raw.headersSent) {
      await input.call.release().catch(() => undefined);
      const failure = new GatewayError("internal_error");
      raw.writeHead(failure.status, { "content-type": "application/json; charset=utf-8", "x-request-id": request.id });
      raw.end(JSON.stringify(renderError(failure, request.errorShape, request.id)));
    } else {
      raw.end(encoder.own(input.format.streamError("internal_error", "Internal error.")) + encoder.close());
    }
  }
}

async function pumpAndSettle(
  services: PipelineServices,
  request: FastifyRequest,
  reply: FastifyReply,
  input: RelayInput & { signal: Cancellation; format: ClientFormat; encoder: FrameEncoder },
): Promise<void> {
  const { plan, info, call, signal, format, encoder } = input;
  const planned = plan.streamTranslator();
  // A clamped stream from an upstream that may overshoot its limit is cut at the limit by the gateway.
  const limited =
    call.clampedOutputTokens !== null && !upstreamOf(call.hold.model.provider).capabilities.honorsOutputLimit ? stopAtOutputLimit(planned, call.clampedOutputTokens) : null;
  const guard = guardStream(services, request, limited ?? planned);
  // The cache records what the client is sent: after the guardrails' masking.
  const recorder = input.store === null ? null : new RecordingTranslator(guard ?? limited ?? planned);
  const translator = new CostInBandStream(recorder ?? guard ?? limited ?? planned);
  const raw = reply.raw;
  // The head goes out with the first scrubbed frame: until then a failure is still a proper error.
  const open = () => {
    request.meter.firstByteAt = performance.now();
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      "content-type": encoder.contentType,
      "cache-control": "no-cache",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
  };

  const { response, firstChunk, scrubber } = call.upstream;
  const outcome = await pumpStream({
    reply,
    body: response.body,
    firstChunk: firstChunk ?? null,
    decoder: upstreamOf(call.hold.model.provider).streamDecoder(),
    translator,
    scrubber,
    signal,
    open,
    encoder,
    ...((limited || guard) && { limitReached: () => (limited?.reached() ?? false) || (guard?.blocked() ?? null) !== null }),
  });
  if (guard !== null && (outcome.end === "completed" || outcome.end === "limit_reached")) guard.checkHeld();
  const block = guard?.blocked() ?? null;
  if (block !== null) {
    // Cut by a guardrail: charged what the upstream produced (or not: charge_blocked_answers), and
    // ended with the format's error event, or an ordinary 400 when nothing was sent yet.
    await settleBlockedAnswer(services, request, call, plausibleUsage(translator.reportedUsage()) ?? estimateUsage(info, translator.deliveredText()));
    const error = guardrailError(block, "response");
    request.meter.errorType = error.type;
    request.meter.errorMessage = error.message;
    if (raw.destroyed) return;
    if (!raw.headersSent) {
      raw.writeHead(error.status, { ...(reply.getHeaders() as Record<string, string>), "content-type": "application/json; charset=utf-8" });
      raw.end(JSON.stringify(renderError(error, request.errorShape, request.id)));
    } else raw.end(encoder.own(format.streamError(error.type, error.message)) + encoder.close());
    return;
  }
  if (outcome.end === "upstream_failed" && !raw.headersSent) {
    // Nothing reached the client: no charge, and an ordinary error response in the route's shape.
    await call.release();
    const error = outcome.failure === "internal_error" ? new GatewayError("internal_error") : new GatewayError("provider_error", "The upstream stream failed before any output.");
    request.meter.errorType = error.type;
    request.meter.errorMessage = error.message;
    raw.writeHead(error.status, { ...(reply.getHeaders() as Record<string, string>), "content-type": "application/json; charset=utf-8" });
    raw.end(JSON.stringify(renderError(error, request.errorShape, request.id)));
    return;
  }
  const usage = plausibleUsage(translator.reportedUsage()) ?? estimateUsage(info, translator.deliveredText());
  // Settle before the closing frames so the request's log line carries its cost; a failure here
  // cannot become a 502 any more (the content is delivered), so the charge is retried instead.
  let cost: bigint | undefined;
  try {
    cost = (await call.settle(usage)).cost;
  } catch (error) {
    services.logger.error({ request_id: request.id, err: error }, "stream settlement failed; retrying in the background");
    services.settlementRetries.schedule(call.hold, usage, call.hold.model.provider.name, request.trace);
  }
  meter(request, usage, cost);
  // Unknown when settlement failed: the usage frame then goes out without a cost (docs/billing.md).
  translator.setCost(cost === undefined ? null : formatUsd(cost));

  if (outcome.end !== "client_aborted" && !raw.destroyed) {
    let closing: string;
    let complete = false;
    try {
      const ended = outcome.end === "completed" || outcome.end === "limit_reached";
      const frames = ended
        ? translator.end()
        : outcome.failure === "internal_error"
          ? translator.fail("internal_error", "Internal error.")
          : translator.fail("provider_error", "The upstream stream failed.");
      if (ended) await plan.complete?.();
      const late = guard?.blocked() ?? null;
      // The closing frames' whole texts (Responses' done events) can still meet a block.
      closing = late
        ? encoder.own(format.streamError("guardrail_blocked", guardrailError(late, "response").message)) + encoder.close()
        : encoder.frames(frames, scrubber) + encoder.close();
      complete = late === null && outcome.end === "completed";
    } catch (error) {
      // The closing frames could not be made, or what completes the answer (storing a response)
      // failed: the stream ends with the format's error event instead, so the client never takes
      // it for a complete answer. The delivered content stays charged, as for any stream that
      // fails after delivering (docs/billing.md).
      services.logger.error({ request_id: request.id, err: error }, "closing the stream failed");
      request.meter.errorType = "internal_error";
      request.meter.errorMessage = "Internal error.";
      closing = encoder.own(format.streamError("internal_error", "Internal error.")) + encoder.close();
    }
    if (!raw.headersSent) open();
    raw.end(closing);
    const { store } = input;
    // Only a whole answer that was charged is stored (an unsettled one has no cost to price a hit by).
    if (complete && cost !== undefined && store !== null && recorder !== null) {
      storeAnswer(store.services, store.lookup, { kind: "stream", frames: storableFrames(recorder.frames, scrubber), usage, costNano: String(cost), modelId: store.modelId });
    }
  } else {
    request.meter.errorType = "client_aborted";
    delete request.meter.errorMessage;
    raw.destroy();
    // A destroyed response never finishes, so Fastify's onResponse does not run: recorded here.
    recordRequest(request, raw.statusCode, services);
  }
}

/**
 * An answer a guardrail blocked: the provider was paid for it, so by default it is charged what the
 * upstream reported (billing.charge_blocked_answers: false releases the hold instead, docs/billing.md).
 */
async function settleBlockedAnswer(services: PipelineServices, request: FastifyRequest, call: MeteredCall, usage: Usage): Promise<void> {
  if (!services.config.guardrails.chargeBlockedAnswers) return call.release();
  meter(request, usage, (await call.settle(usage)).cost);
}

function estimateUsage(info: ClientRequestInfo, deliveredText: string): Usage {
  const outputTokens = deliveredText ? estimateTextTokens(deliveredText) : 0;
  return { inputTokens: info.promptTokens, cachedInputTokens: 0, outputTokens, reasoningTokens: 0, estimated: true };
}

function meter(request: FastifyRequest, usage: Usage, cost: bigint | undefined): void {
  request.meter.usage = usage;
  request.meter.inputTokens = usage.inputTokens;
  request.meter.outputTokens = usage.outputTokens;
  request.meter.costNano = cost;
}
