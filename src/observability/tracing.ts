// OpenTelemetry traces (docs/operations.md#traces, decision 0018): off unless the OTEL_* variables
// turn them on (settings.ts). When off, nothing here is constructed: the request path checks one
// field (request.trace, or the services' tracing) and creates no span objects.
// When on: one SERVER span per request (its parent from the client's W3C traceparent when sent), and
// child spans for admission, each upstream attempt (CLIENT, whose context goes upstream as the
// traceparent header) and settlement. Spans are passed explicitly, not through a context manager
// (no AsyncLocalStorage on the hot path). Attributes carry names, counts and statuses only: never
// prompt or completion text, an upstream key, an upstream host or a client's API key.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
} from "@opentelemetry/sdk-trace-base";
import type { IncomingHttpHeaders } from "node:http";
import { genAiOperation, genAiProvider } from "./gen-ai.js";
import type { TracingSettings } from "./settings.js";
import type { RequestTrace, SpanFactory, TracedOutcome } from "./spans.js";

function samplerOf(settings: TracingSettings): Sampler {
  const root = settings.ratio >= 1 ? new AlwaysOnSampler() : settings.ratio <= 0 ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(settings.ratio);
  return settings.parentBased ? new ParentBasedSampler({ root }) : root;
}

export class Tracing implements SpanFactory {
  readonly #provider: BasicTracerProvider;
  readonly #tracer: Tracer;
  readonly #propagator = new W3CTraceContextPropagator();

  constructor(settings: TracingSettings, options: { exportDelayMs?: number } = {}) {
    const exporter = new OTLPTraceExporter({ url: settings.url, headers: settings.headers });
    this.#provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ "service.name": settings.serviceName }),
      sampler: samplerOf(settings),
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: options.exportDelayMs ?? 1000 })],
    });
    this.#tracer = this.#provider.getTracer("model-gateway");
  }

  /** The request's SERVER span, a child of the client's traceparent when it sent a valid one. */
  startRequest(method: string, route: string, headers: IncomingHttpHeaders): RequestTrace {
    const parent = this.#propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
    const span = this.#tracer.startSpan(`${method} ${route}`, { kind: SpanKind.SERVER, attributes: { "http.request.method": method, "http.route": route } }, parent);
    return { tracing: this, span };
  }

  /** A child span of the request's span. */
  child(parent: RequestTrace, name: string, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL): Span {
    return this.#tracer.startSpan(name, { kind, attributes }, trace.setSpan(ROOT_CONTEXT, parent.span));
  }

  /** Writes the span's context into outgoing headers (traceparent, tracestate). */
  inject(span: Span, headers: Record<string, string>): void {
    this.#propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
  }

  endRequest(t: RequestTrace, route: string, outcome: TracedOutcome): void {
    const { span } = t;
    const attributes: Attributes = { "http.response.status_code": outcome.status, "gateway.request_id": outcome.requestId };
    if (outcome.model !== undefined) {
      attributes["gen_ai.operation.name"] = genAiOperation(route);
      attributes["gen_ai.request.model"] = outcome.model;
      attributes["gen_ai.provider.name"] = genAiProvider(outcome.providerType);
    }
    if (outcome.provider !== undefined) attributes["gateway.provider"] = outcome.provider;
    if (outcome.responseModel !== undefined) attributes["gen_ai.response.model"] = outcome.responseModel;
    if (outcome.deployment !== undefined) attributes["gateway.deployment"] = outcome.deployment;
    if (outcome.attempts !== undefined) attributes["gateway.attempts"] = outcome.attempts;
    const u = outcome.usage;
    if (u) {
      attributes["gen_ai.usage.input_tokens"] = u.inputTokens;
      attributes["gen_ai.usage.output_tokens"] = u.outputTokens;
      if (u.cachedInputTokens > 0) attributes["gen_ai.usage.cache_read.input_tokens"] = u.cachedInputTokens;
      const cacheWrite = (u.cacheWrite5mTokens ?? 0) + (u.cacheWrite1hTokens ?? 0);
      if (cacheWrite > 0) attributes["gen_ai.usage.cache_creation.input_tokens"] = cacheWrite;
      if (u.reasoningTokens > 0) attributes["gen_ai.usage.reasoning.output_tokens"] = u.reasoningTokens;
    }
    if (outcome.costUsd !== undefined) attributes["gateway.cost_usd"] = outcome.costUsd;
    const errorType = outcome.errorType ?? (outcome.status >= 400 ? String(outcome.status) : undefined);
    if (errorType !== undefined) attributes["error.type"] = errorType;
    span.setAttributes(attributes);
    if (outcome.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }

  /** Sends the spans not yet exported. */
  flush(): Promise<void> {
    return this.#provider.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#provider.shutdown();
  }
}
