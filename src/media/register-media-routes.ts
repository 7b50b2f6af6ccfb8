// The media routes: POST /v1/images/generations, POST /v1/embeddings, POST /v1/videos,
// GET /v1/videos/{id}, GET /v1/videos/{id}/content, and Google's Gemini API (/v1beta, src/http/routes/gemini.ts),
// registered here because its embedContent and batchEmbedContents run the embeddings path. All
// authenticate before the body is read, like every /v1 route. The video upload is registered in its
// own Fastify scope so the multipart parser (the OpenAI SDK uploads video requests as
// multipart/form-data) applies to that route only.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { RouteContext } from "../http/route-context.js";
import { authenticate } from "../pipeline/authenticate.js";
import { stopIfClientGone } from "../pipeline/client-departure.js";
import { registerGeminiRoutes } from "../http/routes/gemini.js";
import { handleEmbeddings } from "./embeddings/handle-embeddings.js";
import { handleGeminiEmbeddings } from "./embeddings/gemini-embeddings.js";
import { handleImageGeneration } from "./images/handle-image-generation.js";
import { downloadVideo, pollVideo, type VideoRequest } from "./videos/read-video.js";
import { submitVideo } from "./videos/submit-video.js";
import { VideoTaskService } from "./videos/video-task-service.js";

export function registerMediaRoutes(app: FastifyInstance, ctx: RouteContext): void {
  // Shared by every config snapshot; the rest comes from the request's snapshot (the task service's background work: the current one).
  const { authCache } = ctx.pipeline;
  const tasks = new VideoTaskService(ctx.live, ctx.logger);
  // Submits bill, and admission reads the standing again; polls and downloads read it afresh.
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    await authenticate(request, authCache, "cached");
    await stopIfClientGone(request, reply, request.snapshot.pipeline);
  };
  const onUnbilledRequest = async (request: FastifyRequest) => {
    await authenticate(request, authCache, "exact");
  };

  app.addHook("onReady", async () => tasks.startRefresher());
  app.addHook("onClose", async () => tasks.stopRefresher());

  app.post("/v1/images/generations", { onRequest }, (request, reply) => handleImageGeneration(request.snapshot.pipeline, request.snapshot.media.settings, request, reply));
  app.post("/v1/embeddings", { onRequest }, (request, reply) => handleEmbeddings(request.snapshot.pipeline, request, reply));
  registerGeminiRoutes(app, ctx, handleGeminiEmbeddings);

  app.register(async (scope) => {
    scope.addContentTypeParser("multipart/form-data", { parseAs: "buffer", bodyLimit: ctx.config.bodyLimitBytes }, (_request, body, done) => done(null, body));
    scope.post("/v1/videos", { onRequest }, (request, reply) => submitVideo(request.snapshot.pipeline, request.snapshot.media.settings, tasks, request, reply));
  });
  app.get("/v1/videos/:id", { onRequest: onUnbilledRequest }, (request) => pollVideo(tasks, request as VideoRequest));
  app.get("/v1/videos/:id/content", { onRequest: onUnbilledRequest }, (request, reply) => downloadVideo(tasks, request as VideoRequest, reply));
}
