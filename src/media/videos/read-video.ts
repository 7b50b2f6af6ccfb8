// GET /v1/videos/{id}?model=... (poll) and GET /v1/videos/{id}/content (download).
// Another account's task is indistinguishable from an unknown one (404), so ids reveal nothing.
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { checkRequestBody } from "../../formats/fields.js";
import { GatewayError, invalidRequest } from "../../errors/catalogue.js";
import { scrubberForResponse } from "../../pipeline/response-scrubber.js";
import { scrubHeaders } from "../../pipeline/scrub.js";
import { upstreamError } from "../../pipeline/upstream-errors.js";
import type { VideoTaskRow } from "../../store/video-tasks-store.js";
import { readBounded } from "../../upstreams/upstream-client.js";
import { videoAdapterFor } from "./video-adapter.js";
import { videoObject, type VideoObject } from "./video-object.js";
import type { VideoTaskService } from "./video-task-service.js";

export type VideoRequest = FastifyRequest<{ Params: { id: string }; Querystring: Record<string, unknown> }>;

const VARIANTS = ["video", "thumbnail", "spritesheet"] as const;

/** The parameters of the two routes, as they are checked (and described in the OpenAPI document). */
export const videoReadSchemas = {
  params: z.object({ id: z.string() }),
  pollQuery: z.looseObject({
    model: z
      .string({ error: "The query parameter model (the model the task was created with) is required." })
      .min(1, "The query parameter model (the model the task was created with) is required."),
  }),
  // model is optional here (the SDK's downloadContent does not send it) but must match when given.
  contentQuery: z.looseObject({
    model: z.string().optional(),
    variant: z.enum(VARIANTS, { error: `variant must be one of ${VARIANTS.join(", ")}.` }).default("video"),
  }),
};
/** Text answers on the content route (an error page with a 200) are scrubbed, so they are read whole. */
const MAX_TEXT_CONTENT_BYTES = 8 * 1024 * 1024;

async function ownTask(tasks: VideoTaskService, request: VideoRequest): Promise<VideoTaskRow> {
  const row = await tasks.store.get(request.params.id);
  if (!row || row.account_id !== request.principal.account.id) throw new GatewayError("not_found", `No video task ${request.params.id}.`);
  request.meter.model = row.model;
  request.meter.provider = row.provider;
  return row;
}

function checkModel(row: VideoTaskRow, model: unknown): void {
  if (model !== row.model) throw invalidRequest("model", `The video task ${row.id} was created with the model ${row.model}; pass model=${row.model}.`);
}

export async function pollVideo(tasks: VideoTaskService, request: VideoRequest): Promise<VideoObject> {
  const { model } = checkRequestBody(videoReadSchemas.pollQuery, request.query);
  const row = await ownTask(tasks, request);
  checkModel(row, model);
  return videoObject(await tasks.refresh(row, Date.now(), request.snapshot));
}

export async function downloadVideo(tasks: VideoTaskService, request: VideoRequest, reply: FastifyReply): Promise<void> {
  const { model, variant } = checkRequestBody(videoReadSchemas.contentQuery, request.query);
  let row = await ownTask(tasks, request);
  if (model !== undefined) checkModel(row, model);
  row = await tasks.refresh(row, Date.now(), request.snapshot);
  if (row.status !== "completed") {
    throw new GatewayError("invalid_state", `The video task ${row.id} is ${row.status === "expired" ? "expired" : row.status}; its content is available once it is completed.`);
  }
  const provider = request.snapshot.config.providers.get(row.provider);
  if (!provider) throw new GatewayError("not_found", `The provider of video task ${row.id} is no longer configured.`);
  const adapter = videoAdapterFor(provider);
  if (!adapter.variants.includes(variant)) throw invalidRequest("variant", `This model's provider offers only: ${adapter.variants.join(", ")}.`);

  const abort = new AbortController();
  reply.raw.once("close", () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const key = tasks.upstreamKey(row);
  const response = await adapter.openContent(provider, row.upstream_task_id, key, variant, abort.signal);
  const scrubber = scrubberForResponse(await tasks.scrubberFor(row, provider, key, request.snapshot), response.headers);
  if (response.status < 200 || response.status >= 300) {
    const text = await response.body.text().catch(() => "");
    throw upstreamError(response.status, text, scrubber);
  }

  const headers = scrubHeaders(response.headers);
  const type = headers["content-type"] ?? "application/octet-stream";
  if (/^(text\/|application\/(?:[\w.+-]*\+)?(?:json|xml))/i.test(type)) {
    const body = await readBounded(response.body, MAX_TEXT_CONTENT_BYTES);
    if (!body) throw new GatewayError("provider_error", "The upstream answered with an unexpected body.");
    let text: string;
    try {
      text = scrubber.scrubText(body.toString("utf8"));
    } catch {
      throw new GatewayError("internal_error");
    }
    reply.code(200).header("content-type", type).send(text);
    return;
  }
  // Video bytes are not text and are not scrubbed; they are piped as they arrive (Fastify pipes
  // a stream with backpressure), never buffered whole.
  const length = response.headers["content-length"];
  if (typeof length === "string" && /^\d{1,15}$/.test(length)) reply.header("content-length", length);
  reply.code(200).header("content-type", type).header("cache-control", "private, no-store");
  return reply.send(response.body);
}
