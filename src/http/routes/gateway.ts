// The /v1 model routes (Google's /v1beta, gemini.ts, is registered with the media routes, which serve its
// embedding methods): every one authenticates before its body is
// read, then runs the pipeline.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { RouteContext } from "../route-context.js";
import { authenticate } from "../../pipeline/authenticate.js";
import { stopIfClientGone } from "../../pipeline/client-departure.js";
import type { ClientFormat } from "../../formats/client-format.js";
import { chatFormat } from "../../formats/chat/chat-format.js";
import { countMessagesTokens } from "../../pipeline/count-tokens.js";
import { messagesFormat } from "../../formats/messages/messages-format.js";
import { responsesFormat } from "../../formats/responses/responses-format.js";
import { handleModelRequest } from "../../pipeline/handle-model-request.js";
import { GatewayError, invalidRequest } from "../../errors/catalogue.js";

export function registerGatewayRoutes(app: FastifyInstance, ctx: RouteContext): void {
  // Shared by every config snapshot; the rest of the pipeline comes from the request's snapshot.
  const { authCache } = ctx.pipeline;
  // The model routes bill, and admission reads the standing again; the others read it afresh.
  const onRequest = async (request: FastifyRequest, reply: FastifyReply) => {
    await authenticate(request, authCache, "cached");
    await stopIfClientGone(request, reply, request.snapshot.pipeline);
  };
  const onUnbilledRequest = async (request: FastifyRequest) => {
    await authenticate(request, authCache, "exact");
  };
  const routes: ReadonlyArray<[string, ClientFormat]> = [
    ["/v1/chat/completions", chatFormat],
    ["/v1/messages", messagesFormat],
    ["/v1/responses", responsesFormat(ctx.store.responses)],
  ];
  for (const [path, format] of routes) {
    app.post(path, { onRequest }, (request, reply) => handleModelRequest(request.snapshot.pipeline, format, request, reply));
  }

  // Anthropic's token counter, which coding agents call before long requests: the upstream's own
  // count where it has one, else the gateway's documented estimate; never billed.
  app.post("/v1/messages/count_tokens", { onRequest: onUnbilledRequest }, async (request, reply) => {
    const body = request.body;
    if (!body || typeof body !== "object" || Array.isArray(body)) throw invalidRequest("body", "The request body must be a JSON object.");
    return countMessagesTokens(request.snapshot.pipeline, body as Record<string, unknown>, request, reply);
  });

  app.get<{ Params: { id: string } }>("/v1/responses/:id", { onRequest: onUnbilledRequest }, async (request) => {
    const stored = (await ctx.store.responses.get(request.principal.account.id, request.params.id)) as { response?: unknown } | null;
    if (!stored?.response) throw new GatewayError("not_found", `No stored response ${request.params.id}.`);
    return stored.response;
  });
}
