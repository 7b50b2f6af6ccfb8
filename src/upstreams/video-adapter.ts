// The contract of a video adapter and the small readers every adapter uses on upstream JSON.
import type { ProviderConfig } from "../core/catalog.js";
import { GatewayError } from "../errors/catalogue.js";
import type { UpstreamHttpResponse, UpstreamRequest } from "./upstream-client.js";

export interface VideoSubmission {
  upstreamModel: string;
  prompt: string;
  seconds: number;
  size: string | null;
  /** An image to start from, uploaded by the client as multipart. */
  inputReference: File | null;
}

export type UpstreamVideoStatus = "queued" | "in_progress" | "completed" | "failed";

export interface UpstreamVideoState {
  status: UpstreamVideoStatus;
  progress: number | null;
  /** Seconds of video produced, when the upstream says. */
  seconds: number | null;
  /** The upstream's failure message, unscrubbed. */
  error: string | null;
}

export interface VideoAdapter {
  /** The content variants GET /v1/videos/{id}/content can ask this upstream for. */
  variants: readonly string[];
  /** Prepares the submit body once; the returned function addresses it to one key. */
  prepareSubmit(provider: ProviderConfig, submission: VideoSubmission): Promise<(key: string) => UpstreamRequest>;
  /** The upstream task id and first state from a 2xx submit answer; throws provider_error when unusable. */
  parseSubmitted(json: unknown): { upstreamTaskId: string; state: UpstreamVideoState };
  pollRequest(provider: ProviderConfig, upstreamTaskId: string, key: string): UpstreamRequest;
  parsePolled(json: unknown): UpstreamVideoState;
  /** The finished video as an upstream response (any status; the caller maps errors). */
  openContent(provider: ProviderConfig, upstreamTaskId: string, key: string, variant: string, signal: AbortSignal): Promise<UpstreamHttpResponse>;
}

export function unusableAnswer(what: string): GatewayError {
  return new GatewayError("provider_error", `The upstream's ${what} could not be understood.`);
}

export function record(value: unknown): Record<string, unknown> {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function numberOrNull(value: unknown): number | null {
  const n = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : null;
}

/** Headers for a GET: the upstream's auth and extra headers without the JSON content type. */
export function getHeaders(headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  delete out["content-type"];
  return out;
}
