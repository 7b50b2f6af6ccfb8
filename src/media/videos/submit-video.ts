// POST /v1/videos: resolve model -> tier -> admit (hold the projected seconds, long TTL) -> submit
// with failover -> store the task (upstream key encrypted) -> the gateway's own task object.
import type { FastifyReply, FastifyRequest } from "fastify";
import { newId } from "../../core/ids.js";
import { GatewayError } from "../../errors/catalogue.js";
import { admissionFor, requestedModel } from "../../pipeline/admission.js";
import { openMeteredCall } from "../../pipeline/metered-call.js";
import type { PipelineServices } from "../../pipeline/services.js";
import type { MediaSettings } from "../../config/media-settings.js";
import { readBounded } from "../../upstreams/upstream-client.js";
import { videoAdapterFor, type UpstreamVideoState } from "./video-adapter.js";
import { videoObject } from "./video-object.js";
import { parseVideoRequest } from "./video-request.js";
import type { VideoTaskService } from "./video-task-service.js";
import { setRateLimitHeaders } from "../../pipeline/traffic.js";

const MAX_SUBMIT_ANSWER_BYTES = 1024 * 1024;

export async function submitVideo(services: PipelineServices, settings: MediaSettings, tasks: VideoTaskService, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const input = await parseVideoRequest(request.body, request.headers["content-type"]);
  const model = requestedModel(services, request, input.model, "video");
  const adapter = videoAdapterFor(model.provider);
  const seconds = input.seconds ?? settings.defaultVideoSeconds;
  // The default is sent upstream explicitly, so what is held is what the provider is asked for.
  const prepared = await adapter.prepareSubmit(model.provider, {
    upstreamModel: model.upstreamModel,
    prompt: input.prompt,
    seconds,
    size: input.size,
    inputReference: input.inputReference,
  });

  const accountId = request.principal.account.id;
  // Not tied to the client's connection: once the upstream accepted a task it is recorded (and
  // billed when it completes, as the upstream bills the gateway), even if the client left meanwhile.
  // Each attempt is bounded by the provider's header and body timeouts. The hold lives as long as
  // a task may; the task settles or releases it later, possibly in another process.
  const call = await openMeteredCall(services, {
    ...admissionFor(services, request, reply, { model, route: "videos", projectedInputTokens: 0, projectedOutputTokens: 0, projectedVideoSeconds: seconds }),
    admitOptions: { ttlMs: settings.videoTaskTtlMs },
    build: prepared,
    awaitFirstChunk: false,
    signal: new AbortController().signal,
  });
  if (call === null) throw new GatewayError("internal_error"); // cannot happen: only a client's cancellation makes it null
  setRateLimitHeaders(reply, call.hold, "videos");

  let upstream: { upstreamTaskId: string; state: UpstreamVideoState; key: string };
  try {
    const body = await readBounded(call.upstream.response.body, MAX_SUBMIT_ANSWER_BYTES).catch(() => null);
    let json: unknown;
    try {
      json = body ? JSON.parse(body.toString("utf8")) : null;
    } catch {
      json = null;
    }
    if (json === null) throw new GatewayError("provider_error", "The upstream answered the video request with a body that is not JSON.");
    upstream = { ...adapter.parseSubmitted(json), key: call.upstream.key };
    if (upstream.state.error) upstream.state.error = call.upstream.scrubber.scrubText(upstream.state.error); // with this answer's header ids
  } catch (error) {
    await call.release();
    throw error;
  }

  const now = Date.now();
  const id = newId("video");
  let row;
  try {
    row = await services.store.videoTasks.insert({
      id,
      accountId,
      keyId: request.principal.key.id,
      requestId: request.id,
      model: model.id,
      provider: model.provider.name,
      upstreamKeyCiphertext: services.store.box.encrypt(upstream.key),
      upstreamTaskId: upstream.upstreamTaskId,
      status: upstream.state.status === "in_progress" ? "in_progress" : "queued",
      progress: upstream.state.progress ?? 0,
      seconds,
      size: input.size,
      now,
    });
  } catch (error) {
    // The upstream task exists but cannot be tracked: nothing will settle it, so nothing is held.
    request.log.error({ err: error, video_task: id }, "storing a submitted video task failed");
    await call.release();
    throw new GatewayError("internal_error", "The video task could not be recorded.");
  }
  // A task the upstream refused at once is stored failed (hold released) so the client can poll it.
  if (upstream.state.status === "failed") {
    await tasks.apply(row, upstream.state, now, request.snapshot);
    row = (await services.store.videoTasks.get(id)) ?? row;
  }
  reply.code(200).send(videoObject(row));
}
