// Stage: route (routing groups, docs/request-path.md). A model that lists deployments is served by
// one of them: chosen among the deployments not yet tried whose breaker is not open, of the lowest
// priority number; under "ordered" the first in config order, under "weighted" at random by weight.
// Each attempted deployment is planned (its provider's API), then forwarded with failover across its
// keys (forward.ts). It falls over to the next deployment when its keys are all rate limited, give
// no response (a stream: before its first byte) or answer 5xx; with context_fallback, a context-length
// error falls over to a deployment with a larger context window. Any other answer ends the routing.
// Every deployment has a circuit breaker (scope "deployment:<model>/<name>", the same machinery as the
// keys'): no response or 5xx is a failure, a 429, a client's 4xx or no attempt at all counts for nothing.
// Nothing here writes to the client: the metering sequence (metered-call.ts) gets the 2xx answer.
import type { Deployment, ModelConfig, RoutingGroup } from "../core/catalog.js";
import { GatewayError } from "../errors/catalogue.js";
import type { Outcome } from "../upstreams/upstream-health.js";
import { forward, type ForwardRequest, type Forwarded, type ForwardServices } from "./forward.js";
import { upstreamError } from "./upstream-errors.js";

/** The request for one deployment's view of the model, planned when the deployment is first attempted. */
export type PlanFor = (deployment: ModelConfig) => Promise<ForwardRequest["build"]>;

export interface Routed {
  upstream: Forwarded;
  deployment: Deployment;
}

/** Forwards to the group's deployments until one answers 2xx; throws the failure that ended it. */
export async function forwardToGroup(services: ForwardServices, accountId: string, group: RoutingGroup, request: Omit<ForwardRequest, "build">, planFor: PlanFor): Promise<Routed> {
  const { health } = services;
  let tried = 0;
  let attempts = 0;
  let largerThan = 0;
  let rateLimited: GatewayError | null = null;
  let lastFailure: GatewayError | null = null;
  for (let deployment = choose(services, group, tried, largerThan); deployment; deployment = choose(services, group, tried, largerThan)) {
    tried |= deployment.bit;
    const pass = health.pass(deployment.breakerScope);
    if (!pass) continue; // half-open with its trials taken
    let outcome: Outcome = "neutral";
    try {
      const build = await planFor(deployment.model);
      const before = attempts;
      let upstream: Forwarded;
      try {
        upstream = await forward(services, accountId, deployment.model.provider, {
          build,
          awaitFirstChunk: request.awaitFirstChunk,
          signal: request.signal,
          onAttempt: (n) => {
            attempts = before + n;
            request.onAttempt(attempts);
          },
        });
      } catch (error) {
        if (!(error instanceof GatewayError) || request.signal.aborted) throw error;
        // forward's own verdicts: every key rate limited, or none answered. Without an attempt (every
        // key open, or none configured for this account) the deployment's health was not observed.
        if (error.type === "rate_limit_error") rateLimited = error;
        else if (error.type === "provider_error") outcome = attempts > before ? "failure" : "neutral";
        else throw error;
        lastFailure = error;
        continue;
      }
      const { response } = upstream;
      if (response.status >= 200 && response.status < 300) {
        outcome = "success";
        return { upstream, deployment };
      }
      const text = await response.body.text().catch(() => "");
      const error = upstreamError(response.status, text, upstream.scrubber);
      if (response.status >= 500) {
        outcome = "failure";
      } else if (group.contextFallback && isContextLengthError(response.status, text)) {
        largerThan = Math.max(largerThan, deployment.model.contextWindow ?? 0);
      } else {
        throw error;
      }
      lastFailure = error;
    } finally {
      health.settle(pass, outcome);
    }
  }
  if (rateLimited) throw rateLimited; // retrying later can succeed once the limits reset
  if (lastFailure) throw lastFailure;
  // Nothing was attempted: every deployment left is open (or half-open with its trials taken).
  const open = group.deployments.filter((d) => health.isOpen(d.breakerScope)).map((d) => d.breakerScope);
  const retry = String(open.length > 0 ? health.secondsUntilTrial(open) : 1);
  throw new GatewayError("provider_error", "Every deployment of this model is failing; try again later.", { headers: { "retry-after": retry } });
}

/** The next deployment to try (see the file comment), or null when none is left. */
function choose(services: ForwardServices, group: RoutingGroup, tried: number, largerThan: number): Deployment | null {
  let best = Infinity;
  let totalWeight = 0;
  const eligible = (d: Deployment) => (tried & d.bit) === 0 && (largerThan === 0 || (d.model.contextWindow ?? 0) > largerThan) && !services.health.isOpen(d.breakerScope);
  for (const d of group.deployments) {
    if (d.priority > best || !eligible(d)) continue;
    if (d.priority < best) {
      best = d.priority;
      totalWeight = 0;
    }
    totalWeight += d.weight;
  }
  let pick = group.strategy === "weighted" ? Math.random() * totalWeight : 0;
  let last: Deployment | null = null;
  for (const d of group.deployments) {
    if (d.priority !== best || !eligible(d)) continue;
    last = d;
    pick -= d.weight;
    if (pick < 0) break;
  }
  return last;
}

/** An upstream's refusal of a prompt longer than its context window (OpenAI, Anthropic, Google wordings). */
export function isContextLengthError(status: number, bodyText: string): boolean {
  if (status !== 400 && status !== 413 && status !== 422) return false;
  return /context_length_exceeded|context[ _-]length|context window|maximum context|prompt is too long|input is too long|exceeds the maximum number of tokens/i.test(bodyText);
}
