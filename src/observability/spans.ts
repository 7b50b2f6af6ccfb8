// What the request path needs of tracing, without the OpenTelemetry SDK: the request's span handle
// and ending a child span. The SDK (tracing.ts) is loaded only when tracing is on (app.ts); so is
// @opentelemetry/api, whose types alone are imported here (its enums' two values are below).
import type { Attributes, Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { Usage } from "../core/usage.js";

/**
 * SpanKind.CLIENT and SpanStatusCode.ERROR (their values in the OpenTelemetry API), written out: the
 * enums are the only values the request path would import from @opentelemetry/api, a package of 44
 * modules that a gateway without tracing otherwise never loads.
 */
export const CLIENT_SPAN_KIND: SpanKind.CLIENT = 2;
const ERROR_STATUS_CODE: SpanStatusCode.ERROR = 2;

/** What the request path asks of tracing (implemented by tracing.ts's Tracing). */
export interface SpanFactory {
  child(parent: RequestTrace, name: string, attributes: Attributes, kind?: SpanKind): Span;
  inject(span: Span, headers: Record<string, string>): void;
  endRequest(trace: RequestTrace, route: string, outcome: TracedOutcome): void;
}

/** A request's span and the tracing that made it: present on a request only while tracing is on. */
export interface RequestTrace {
  readonly tracing: SpanFactory;
  readonly span: Span;
}

/** What the request span records at its end (from request.meter; see pipeline/request-context.ts). */
export interface TracedOutcome {
  status: number;
  requestId: string;
  model: string | undefined;
  provider: string | undefined;
  providerType: string | undefined;
  responseModel: string | undefined;
  deployment: string | undefined;
  attempts: number | undefined;
  usage: Usage | undefined;
  costUsd: string | undefined;
  errorType: string | undefined;
}

/** Ends a child span, marking it failed when `error` is given (its type only: a message may quote an upstream). */
export function endSpan(span: Span, attributes: Attributes, error?: string): void {
  span.setAttributes(attributes);
  if (error !== undefined) {
    span.setAttribute("error.type", error);
    span.setStatus({ code: ERROR_STATUS_CODE });
  }
  span.end();
}
