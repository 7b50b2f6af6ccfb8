// Google long-running operations (Gemini API Veo): POST {base}/models/{model}:predictLongRunning
// returns an operation name; GET {base}/{name} until done; the finished operation names a video
// URI, downloaded with the API key. The operation is asked again at download time rather than
// storing the URI, so the task row needs no provider-specific column.
import type { ProviderConfig } from "../../core/catalog.js";
import { GatewayError } from "../../errors/catalogue.js";
import { readBounded, sendToProvider, type UpstreamHttpResponse } from "../upstream-client.js";
import { authenticateGoogle } from "./authenticate.js";
import { authenticatedRequest } from "../request.js";

import { getHeaders, numberOrNull, record, unusableAnswer, type UpstreamVideoState, type VideoAdapter } from "../video-adapter.js";

// The name goes into a URL path: path characters only, no "..", no scheme, no leading slash.
const OPERATION_NAME = /^(?!.*\.\.)[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)*$/;
const MAX_REDIRECTS = 5;
const MAX_OPERATION_BYTES = 4 * 1024 * 1024;

/** "1280x720" -> 16:9 at 720p; Veo takes an aspect ratio and a resolution, not pixel sizes. */
function sizeParameters(size: string | null): Record<string, string> {
  const match = size ? /^(\d+)x(\d+)$/.exec(size) : null;
  if (!match) return {};
  const width = Number(match[1]);
  const height = Number(match[2]);
  return { aspectRatio: width >= height ? "16:9" : "9:16", resolution: `${Math.min(width, height)}p` };
}

function videoUri(response: Record<string, unknown>): string | null {
  const generated = record(response.generateVideoResponse).generatedSamples;
  const samples = Array.isArray(generated) ? generated : Array.isArray(response.videos) ? response.videos : [];
  const first = record(samples[0]);
  const uri = record(first.video).uri ?? first.uri;
  return typeof uri === "string" && /^https?:\/\//i.test(uri) ? uri : null;
}

function state(json: unknown): UpstreamVideoState & { uri: string | null } {
  const operation = record(json);
  const metadata = record(operation.metadata);
  if (operation.done !== true) return { status: "in_progress", progress: numberOrNull(metadata.progressPercent), seconds: null, error: null, uri: null };
  const error = record(operation.error);
  if (operation.error !== undefined) {
    const message = typeof error.message === "string" ? error.message : "The upstream operation failed.";
    return { status: "failed", progress: null, seconds: null, error: message, uri: null };
  }
  const response = record(operation.response);
  const uri = videoUri(response);
  if (!uri) {
    // Done without a video: typically every sample was removed by the provider's safety filters.
    const reasons = record(response.generateVideoResponse).raiMediaFilteredReasons;
    const detail = Array.isArray(reasons) && typeof reasons[0] === "string" ? `: ${reasons[0]}` : ".";
    return { status: "failed", progress: null, seconds: null, error: `The upstream returned no video${detail}`, uri: null };
  }
  return { status: "completed", progress: 100, seconds: null, error: null, uri };
}

function operationRequest(provider: ProviderConfig, name: string, key: string) {
  const request = authenticatedRequest(authenticateGoogle, provider, "GET", `/${name}`, key);
  return { url: request.url, method: "GET" as const, headers: getHeaders(request.headers) };
}

export const googleOperationsAdapter: VideoAdapter = {
  variants: ["video"],

  async prepareSubmit(provider, submission) {
    const instance: Record<string, unknown> = { prompt: submission.prompt };
    if (submission.inputReference) {
      const bytes = Buffer.from(await submission.inputReference.arrayBuffer());
      instance.image = { bytesBase64Encoded: bytes.toString("base64"), mimeType: submission.inputReference.type || "image/png" };
    }
    const body = JSON.stringify({
      instances: [instance],
      parameters: { durationSeconds: submission.seconds, ...sizeParameters(submission.size) },
    });
    const path = `/models/${encodeURIComponent(submission.upstreamModel)}:predictLongRunning`;
    return (key) => authenticatedRequest(authenticateGoogle, provider, "POST", path, key, body);
  },

  parseSubmitted(json) {
    const name = record(json).name;
    if (typeof name !== "string" || !OPERATION_NAME.test(name)) throw unusableAnswer("operation name");
    const first = state(json);
    // A fresh operation is not running yet as far as the client can tell.
    return { upstreamTaskId: name, state: first.status === "in_progress" ? { ...first, status: "queued" } : first };
  },

  pollRequest: operationRequest,

  parsePolled: state,

  async openContent(provider, name, key, _variant, signal) {
    const operation = await sendToProvider(provider, operationRequest(provider, name, key), signal);
    if (operation.status < 200 || operation.status >= 300) return operation;
    const text = await readBounded(operation.body, MAX_OPERATION_BYTES);
    let uri: string | null = null;
    try {
      uri = text ? state(JSON.parse(text.toString("utf8"))).uri : null;
    } catch {
      uri = null;
    }
    if (!uri) throw new GatewayError("provider_error", "The upstream did not name the finished video.");
    return download(provider, uri, key, signal);
  },
};

/**
 * Follows redirects by hand: the API key goes only to the provider's own origin, never to a host
 * a redirect or the operation names (a signed storage URL needs no key).
 */
async function download(provider: ProviderConfig, first: string, key: string, signal: AbortSignal): Promise<UpstreamHttpResponse> {
  const home = new URL(provider.baseUrl).origin;
  let url = new URL(first);
  for (let hop = 0; ; hop++) {
    const withKey = url.origin === home;
    const headers = withKey ? getHeaders(authenticatedRequest(authenticateGoogle, provider, "GET", "", key).headers) : {};
    const response = await sendToProvider(provider, { url: url.toString(), method: "GET", headers }, signal);
    const location = response.headers.location;
    if (response.status < 300 || response.status >= 400 || typeof location !== "string" || hop >= MAX_REDIRECTS) return response;
    await response.body.dump().catch(() => undefined);
    url = new URL(location, url);
    if (url.protocol !== "https:" && url.protocol !== "http:") throw new GatewayError("provider_error", "The upstream redirected the download somewhere unusable.");
  }
}
