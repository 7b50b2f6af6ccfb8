// A client wire format as the pipeline sees it: how to read the few fields every stage needs, and
// which plan serves it on each kind of upstream.
import type { Route } from "../billing/types.js";
import type { ModelConfig } from "../core/catalog.js";
import type { ErrorShape } from "../errors/catalogue.js";
import type { ClientFrame, ClientRequestInfo, UpstreamPlan } from "../upstreams/plan.js";

export interface ClientFormat {
  route: Route;
  errorShape: ErrorShape;
  /** Reads model, stream and token fields; throws invalid_request naming the field. */
  describe(body: Record<string, unknown>): ClientRequestInfo;
  /** The body with its output-token limit set to `outputTokens` (clamping), in this format's field. */
  limitOutput(body: Record<string, unknown>, outputTokens: number): Record<string, unknown>;
  /** The plan for this model's upstream; throws invalid_request for what it cannot carry. */
  plan(body: Record<string, unknown>, model: ModelConfig, context: PlanContext): Promise<UpstreamPlan> | UpstreamPlan;
  /** This format's error event, for a stream the gateway must end whatever state its translator is in. */
  streamError(type: string, message: string): ClientFrame[];
  /** How a stream is written: SSE (absent), or the JSON array of Google's REST API without alt=sse. */
  streamEncoding?: "sse" | "json_array";
}

export interface PlanContext {
  accountId: string;
  requestId: string;
}
