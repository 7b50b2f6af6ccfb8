// A plan is what one client format needs from one upstream API: the request to send, and how to
// turn the answer (a JSON body or a stream of events) back into the client's format.
// There is one plan builder per (client format, upstream API) pair that is not a pass-through
// of the same format, and each is a thin binding over the pure translators in src/formats.
import type { Usage } from "../core/usage.js";
import type { SseEvent } from "../core/sse.js";
import type { ErrorShape } from "../errors/catalogue.js";

/** One frame for the client, before scrubbing and encoding: `data` is JSON-serialisable or a literal. */
export interface ClientFrame {
  event?: string;
  data: unknown;
  /** Send data as is (e.g. "[DONE]") instead of JSON-encoding it. */
  raw?: boolean;
  /**
   * `data` is already JSON text (an upstream event passed through without parsing). It is still
   * scrubbed: sent as is only when the scrubber finds it clean, else parsed and scrubbed.
   */
  jsonText?: boolean;
  /**
   * This frame carries the request's usage (at data.usage, or data.response.usage for a Responses
   * event): the frame that gets the charged cost, held back until settlement (in-band-cost.ts).
   */
  usageAt?: UsagePlace;
}

export type UsagePlace = "usage" | "response.usage";

export interface StreamTranslator {
  /** One upstream event in, zero or more client frames out. */
  push(event: SseEvent): ClientFrame[];
  /** The upstream stream ended; what closes the client's stream. */
  end(): ClientFrame[];
  /**
   * Instead of end(), when the gateway stops relaying at a clamped output limit the upstream may not
   * honour (docs/billing.md, "Clamping"): the format's length stop and what closes the stream.
   * Absent: this plan's upstream honours the limit itself.
   */
  stopAtLimit?: () => ClientFrame[];
  /** Something failed after the client's stream started: the format's in-band error. */
  fail(type: string, message: string): ClientFrame[];
  /** Usage as the upstream reported it, or null when it did not (yet). */
  reportedUsage(): Usage | null;
  /** Output text (and tool arguments) delivered so far, for estimates when usage is missing. */
  deliveredText(): string;
}

export interface UpstreamPlan {
  /** Path under the provider's base URL. */
  path: string;
  body: unknown;
  stream: boolean;
  /** A buffered upstream answer, in the client's format, with the usage it reports. */
  fromUpstream(json: unknown): { body: unknown; usage: Usage | null };
  streamTranslator(): StreamTranslator;
  /** What the request path returns to the client alongside (e.g. x-gateway-warnings). */
  warnings: string[];
  /**
   * The output limit the plan sends upstream when it raised it above the client's (Anthropic thinking
   * added to a request without a limit): admission holds that much output, so the hold still bounds
   * what the answer can cost.
   */
  outputLimit?: number;
  /** Runs once the whole answer is known, before its last bytes go out (e.g. storing a response). */
  complete?(): Promise<void>;
  /**
   * Set by the request path: what a stored answer goes through before complete() stores it (the
   * answer-side guardrails' masks), so a stored response holds what the client was sent.
   */
  beforeStore?: (value: unknown) => unknown;
}

export interface ClientRequestInfo {
  /** The model id the client asked for (a gateway catalog id). */
  model: string;
  stream: boolean;
  /** max_tokens or its equivalent, when given. */
  maxOutputTokens: number | null;
  /** Every output-token limit field the client set, to check against the model's limit. */
  outputTokenFields: OutputTokenField[];
  /** Estimated prompt tokens, for admission and for estimates when usage is missing. */
  promptTokens: number;
}

export interface OutputTokenField {
  field: string;
  value: number;
}

export interface ClientFormatInfo {
  route: "chat" | "responses" | "messages";
  errorShape: ErrorShape;
}
