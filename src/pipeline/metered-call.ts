// The metering sequence of every paid route, written once: admit (place a hold) -> forward with
// failover -> a 2xx answer handed back with its hold, or the hold released and the failure thrown
// (no response, a non-2xx answer, an exception) or, when the client went away, null.
// Where the hold ends is the route's: a buffered answer (chat, images) settles once it is read, a
// chat stream at the stream's end, a video task when the upstream reports it complete (possibly in
// another process, from the hold stored under the request id). Until then a failure before
// anything was delivered calls release(), which gives the hold back once however often it is called.
// A routing group (routing.ts) is the same sequence: ONE admission, held for the dearest deployment
// that may serve, then failover across deployments inside the forward step; the call's hold then
// names the serving deployment, so settlement charges its price and records its name. Re-admitting
// per deployment would cost a billing round trip per fallback and could refuse mid-failover a request
// already accepted; over-holding briefly only narrows what a nearly empty balance may start
// (docs/decisions/0008-routing-groups.md).
// Clamping (docs/decisions/0010-output-clamping.md): a chat route's admission refused by a money or
// token limit is tried again with the output projection lowered to what the refusal's headroom
// covers, when that is at least the configured minimum; each attempt is one atomic admission, so a
// concurrent request that took the room first only means another, smaller try (a bounded number of
// times), never an overdraw. The route then sends the lowered limit upstream (MeteredRequest.clamp).
import type { FastifyReply, FastifyRequest } from "fastify";
import { LimitRefusal } from "../billing/admission.js";
import { coveredOutputTokens } from "../billing/clamping.js";
import { projectCost } from "../billing/pricing.js";
import type { AdmissionRequest, AdmitOptions, Charge, Hold } from "../billing/types.js";
import type { RoutingGroup } from "../core/catalog.js";
import type { Usage } from "../core/usage.js";
import { ClientAbortedError } from "../upstreams/upstream-client.js";
import { forward, type ForwardRequest, type Forwarded, type ForwardServices } from "./forward.js";
import { forwardToGroup, type PlanFor } from "./routing.js";
import type { PipelineServices } from "./services.js";
import { upstreamError } from "./upstream-errors.js";
import { endSpan, type RequestTrace } from "../observability/spans.js";

export interface MeteredRequest extends ForwardRequest {
  /** The upstream is admission.model's provider, asked with the keys of admission.accountId. */
  admission: AdmissionRequest;
  admitOptions?: AdmitOptions;
  /** Required for a routing group (admission.model.group): plans each deployment attempted; `build` is then unused. */
  planFor?: PlanFor;
  /** A route whose output can be limited (chat routes): how to clamp it. Absent: a refusal is final. */
  clamp?: ClampOptions;
}

export interface ClampOptions {
  /** The fewest output tokens a clamped admission may hold (billing.clamp.min_output_tokens). */
  minOutputTokens: number;
  /** The request to forward with its output limit set to `outputTokens`, replacing `build` and `planFor`. */
  limitOutput(outputTokens: number): Promise<Pick<MeteredRequest, "build" | "planFor">>;
}

/** Admissions per request at most: the full one, then clamped ones while concurrent requests keep taking the room. */
export const MAX_ADMISSION_ATTEMPTS = 4;

export type MeteringServices = ForwardServices & Pick<PipelineServices, "billing">;

/**
 * A hold and the 2xx upstream answer it covers; ended by one settle() or release(). hold.model is the
 * model as served: a routing group's serving deployment (its price, provider and name).
 */
export class MeteredCall {
  #open = true;

  constructor(
    private readonly billing: MeteringServices["billing"],
    readonly hold: Hold,
    readonly upstream: Forwarded,
    /** The output limit the request was admitted with when lower than it asked for (clamped); null otherwise. */
    readonly clampedOutputTokens: number | null = null,
    /** The request's span while tracing is on: settlement is a child span. */
    private readonly trace?: RequestTrace,
  ) {}

  /**
   * Charges the usage against the hold. A failed settlement throws and charges nothing; the hold is
   * not released then (it stays until the sweeper or a settlement retry ends it).
   */
  settle(usage: Usage): Promise<Charge> {
    if (!this.#open) throw new Error("settle() after the metered call ended");
    this.#open = false;
    const settled = this.billing.settle(this.hold, usage, this.hold.model.provider.name);
    if (this.trace === undefined) return settled;
    const span = this.trace.tracing.child(this.trace, "gateway.settlement", { "gateway.estimated_usage": usage.estimated });
    settled.then(
      () => endSpan(span, {}),
      (error: unknown) => endSpan(span, {}, (error as { type?: string } | null)?.type ?? "settlement_failed"),
    );
    return settled;
  }

  /** Gives the hold back: nothing was delivered. Only the first call (before any settle()) does so. */
  async release(): Promise<void> {
    if (!this.#open) return;
    this.#open = false;
    await releaseHold(this.billing, this.hold, this.trace);
  }
}

/** Releases a hold, inside a "gateway.hold_release" child span while tracing is on. */
async function releaseHold(billing: MeteringServices["billing"], hold: Hold, trace: RequestTrace | undefined): Promise<void> {
  if (trace === undefined) return billing.release(hold);
  const span = trace.tracing.child(trace, "gateway.hold_release", {});
  try {
    await billing.release(hold);
    endSpan(span, {});
  } catch (error) {
    endSpan(span, {}, (error as { type?: string } | null)?.type ?? "release_failed");
    throw error;
  }
}

/**
 * Admits, forwards and checks the answer's status. Throws the admission's refusal (nothing held), or
 * the forward's failure after releasing the hold; null when the client went away (hold released).
 */
export async function openMeteredCall(services: MeteringServices, request: MeteredRequest): Promise<MeteredCall | null> {
  // Gone while its body was read or checked: nothing to hold, nothing to forward.
  if (request.signal.aborted) return null;
  const { admission } = request;
  const group = admission.model.group;
  const { hold: admitted, clampedOutputTokens } = request.trace === undefined ? await admit(services, request) : await tracedAdmit(services, request, request.trace);
  // Never charged beyond what was held for the lowered limit, whatever the upstream then reports.
  let hold = clampedOutputTokens === null ? admitted : { ...admitted, chargeCap: admitted.amount };
  // The number of upstream attempts, recorded with the settlement (the ledger's attempts column).
  let attempts = 0;
  let forwarded: MeteredRequest = {
    ...request,
    onAttempt: (n) => {
      attempts = n;
      request.onAttempt(n);
    },
  };
  let upstream: Forwarded;
  try {
    // Gone during the admission: released below, nothing sent.
    if (request.signal.aborted) throw new ClientAbortedError("the client went away");
    if (clampedOutputTokens !== null && request.clamp) forwarded = { ...forwarded, ...(await request.clamp.limitOutput(clampedOutputTokens)) };
    if (group) {
      if (!forwarded.planFor) throw new Error(`model ${admission.model.id} is a routing group: planFor is required`);
      const routed = await forwardToGroup(services, admission.accountId, group, forwarded, forwarded.planFor);
      upstream = routed.upstream;
      if (hold.model !== routed.deployment.model) hold = { ...hold, model: routed.deployment.model };
    } else {
      upstream = await forward(services, admission.accountId, admission.model.provider, forwarded);
      const { response } = upstream;
      if (response.status < 200 || response.status >= 300) {
        const text = await response.body.text().catch(() => "");
        throw upstreamError(response.status, text, upstream.scrubber);
      }
    }
  } catch (error) {
    await releaseHold(services.billing, hold, request.trace);
    if (error instanceof ClientAbortedError || request.signal.aborted) return null;
    throw error;
  }
  return new MeteredCall(services.billing, { ...hold, attempts }, upstream, clampedOutputTokens, request.trace);
}

/**
 * Admission alone, for an answer the gateway serves itself (a response-cache hit, ADR 0044): the same
 * hold a forwarded request would place (a routing group's dearest deployment), never clamped. Throws
 * the refusal; the caller settles or releases the hold.
 */
export async function admitWithoutForwarding(services: MeteringServices, request: MeteredRequest): Promise<Hold> {
  const unclamped: MeteredRequest = { ...request, clamp: undefined };
  const admitted = request.trace === undefined ? await admit(services, unclamped) : await tracedAdmit(services, unclamped, request.trace);
  return admitted.hold;
}

/** admit() inside the request's "gateway.admission" span. */
async function tracedAdmit(services: MeteringServices, request: MeteredRequest, trace: RequestTrace): ReturnType<typeof admit> {
  const span = trace.tracing.child(trace, "gateway.admission", {});
  try {
    const admitted = await admit(services, request);
    endSpan(span, admitted.clampedOutputTokens === null ? {} : { "gateway.clamped_output_tokens": admitted.clampedOutputTokens });
    return admitted;
  } catch (error) {
    endSpan(span, {}, (error as { type?: string } | null)?.type ?? "internal_error");
    throw error;
  }
}

/**
 * Places the hold: for the whole request, else (request.clamp, a refusal with headroom) for the most
 * output the limits cover, at least clamp.minOutputTokens. Throws the last refusal otherwise.
 */
async function admit(services: MeteringServices, request: MeteredRequest): Promise<{ hold: Hold; clampedOutputTokens: number | null }> {
  const { admission, clamp } = request;
  const group = admission.model.group;
  const models = group ? group.deployments.map((d) => d.model) : [admission.model];
  let outputTokens = admission.projectedOutputTokens;
  for (let attempt = 1; ; attempt++) {
    const candidate = { ...admission, projectedOutputTokens: outputTokens };
    try {
      const hold = await services.billing.admit(group ? dearestDeployment(candidate, group) : candidate, request.admitOptions);
      return { hold, clampedOutputTokens: outputTokens < admission.projectedOutputTokens ? outputTokens : null };
    } catch (error) {
      if (!clamp || !(error instanceof LimitRefusal) || error.headroom === null || attempt >= MAX_ADMISSION_ATTEMPTS) throw error;
      const covered = coveredOutputTokens(candidate, models, error.headroom);
      // Not a smaller request than the refused one: the refusal is final.
      if (covered < clamp.minOutputTokens || covered >= outputTokens) throw error;
      outputTokens = covered;
    }
  }
}

/** The admission priced at the deployment whose projected cost is highest: whichever of them serves, the hold covers it. */
function dearestDeployment(admission: AdmissionRequest, group: RoutingGroup): AdmissionRequest {
  let dearest = admission;
  let highest = -1n;
  for (const { model } of group.deployments) {
    const candidate = { ...admission, model };
    const cost = projectCost(candidate);
    if (cost > highest) {
      dearest = candidate;
      highest = cost;
    }
  }
  return dearest;
}

/** Records each attempt's number on the log line and in the x-gateway-attempts header. */
export function countAttempts(request: FastifyRequest, reply: FastifyReply): (attempts: number) => void {
  return (attempts) => {
    request.meter.attempts = attempts;
    reply.header("x-gateway-attempts", String(attempts));
  };
}
