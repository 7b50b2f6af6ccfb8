// The media routes: POST /v1/images/generations, POST /v1/embeddings, POST /v1/videos,
// GET /v1/videos/{id}, GET /v1/videos/{id}/content. All authenticate before the body is read, like every /v1 route.
// Registered in their own Fastify scope so the multipart parser (the OpenAI SDK uploads video
// requests as multipart/form-data) applies to these routes only.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { RouteContext } from "../http/route-context.js";
import { authenticate } from "../pipeline/authenticate.js";
import { handleEmbeddings } from "./embeddings/handle-embeddings.js";
import { handleImageGeneration } from "./images/handle-image-generation.js";
import { downloadVideo, pollVideo, type VideoRequest } from "./videos/read-video.js";
import { submitVideo } from "./videos/submit-video.js";
import { VideoTaskService } from "./videos/video-task-service.js";

export function registerMediaRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const services = ctx.pipeline;
  const { settings } = ctx.media;
  const tasks = new VideoTaskService(services, settings, ctx.logger);
  const onRequest = async (request: FastifyRequest) => {
    await authenticate(request, services.authCache);
  };

  app.addHook("onReady", async () => tasks.startRefresher());
  app.addHook("onClose", async () => tasks.stopRefresher());

  app.post("/v1/images/generations", { onRequest }, (request, reply) => handleImageGeneration(services, settings, request, reply));
  app.post("/v1/embeddings", { onRequest }, (request, reply) => handleEmbeddings(services, request, reply));

  app.register(async (scope) => {
    scope.addContentTypeParser("multipart/form-data", { parseAs: "buffer", bodyLimit: ctx.config.bodyLimitBytes }, (_request, body, done) => done(null, body));
    scope.post("/v1/videos", { onRequest }, (request, reply) => submitVideo(services, settings, tasks, request, reply));
  });
  app.get("/v1/videos/:id", { onRequest }, (request) => pollVideo(tasks, request as VideoRequest));
  app.get("/v1/videos/:id/content", { onRequest }, (request, reply) => downloadVideo(tasks, request as VideoRequest, reply));
}
