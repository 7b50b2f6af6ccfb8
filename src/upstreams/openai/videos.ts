// OpenAI Videos (Sora) and compatible upstreams: POST {base}/videos (multipart, as the official SDK
// sends it), GET {base}/videos/{id}, GET {base}/videos/{id}/content.
import { sendToProvider } from "../upstream-client.js";
import { authenticateOpenAi } from "./authenticate.js";
import { authenticatedRequest } from "../request.js";
import { getHeaders, numberOrNull, record, unusableAnswer, type UpstreamVideoState, type VideoAdapter } from "../video-adapter.js";

const TASK_ID = /^[A-Za-z0-9_.:-]{1,256}$/;

function state(json: unknown): UpstreamVideoState {
  const video = record(json);
  const raw = video.status;
  const status = raw === "queued" || raw === "completed" || raw === "failed" ? raw : "in_progress";
  const error = record(video.error);
  return {
    status,
    progress: numberOrNull(video.progress),
    seconds: numberOrNull(video.seconds),
    error: status === "failed" ? (typeof error.message === "string" ? error.message : "The upstream reported a failure.") : null,
  };
}

export const openaiVideosAdapter: VideoAdapter = {
  variants: ["video", "thumbnail", "spritesheet"],

  async prepareSubmit(provider, submission) {
    const form = new FormData();
    form.set("model", submission.upstreamModel);
    form.set("prompt", submission.prompt);
    form.set("seconds", String(submission.seconds));
    if (submission.size) form.set("size", submission.size);
    if (submission.inputReference) form.set("input_reference", submission.inputReference, submission.inputReference.name || "input_reference");
    // Serialised once, so every failover attempt sends the same bytes with the same boundary.
    const encoded = new Response(form);
    const contentType = encoded.headers.get("content-type") ?? "multipart/form-data";
    const body = Buffer.from(await encoded.arrayBuffer());
    return (key) => {
      const request = authenticatedRequest(authenticateOpenAi, provider, "POST", "/videos", key, body);
      request.headers["content-type"] = contentType;
      return request;
    };
  },

  parseSubmitted(json) {
    const id = record(json).id;
    if (typeof id !== "string" || !TASK_ID.test(id)) throw unusableAnswer("video task id");
    return { upstreamTaskId: id, state: state(json) };
  },

  pollRequest(provider, upstreamTaskId, key) {
    const request = authenticatedRequest(authenticateOpenAi, provider, "GET", `/videos/${encodeURIComponent(upstreamTaskId)}`, key);
    return { url: request.url, method: "GET", headers: getHeaders(request.headers) };
  },

  parsePolled: state,

  openContent(provider, upstreamTaskId, key, variant, signal) {
    const path = `/videos/${encodeURIComponent(upstreamTaskId)}/content?variant=${encodeURIComponent(variant)}`;
    const request = authenticatedRequest(authenticateOpenAi, provider, "GET", path, key);
    return sendToProvider(provider, { url: request.url, method: "GET", headers: { ...getHeaders(request.headers), accept: "application/binary" } }, signal);
  },
};
