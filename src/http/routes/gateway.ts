// The /v1 model routes: every one authenticates before its body is read, then runs the pipeline.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { AppContext } from "../../app.js";
import { authenticate } from "../../pipeline/authenticate.js";
import type { ClientFormat } from "../../pipeline/client-format.js";
import { chatFormat } from "../../pipeline/formats/chat-format.js";
import { handleModelRequest } from "../../pipeline/handle-model-request.js";

export const MODEL_ROUTES: ReadonlyArray<[string, ClientFormat]> = [["/v1/chat/completions", chatFormat]];

export function registerGatewayRoutes(app: FastifyInstance, ctx: AppContext): void {
  const services = ctx.pipeline;
  const onRequest = async (request: FastifyRequest) => {
    await authenticate(request, services.authCache);
  };
  for (const [path, format] of MODEL_ROUTES) {
    app.post(path, { onRequest }, (request, reply) => handleModelRequest(services, format, request, reply));
  }
}
