// The OpenAI Embeddings API: the checked request with the upstream's model id, asked in the
// client's encoding, and the answer passed through.
import type { EmbeddingsApi } from "../descriptor.js";

export const openaiEmbeddings: EmbeddingsApi = {
  path: () => "/embeddings",
  requestBody: (request, model) => ({
    model: model.upstreamModel,
    input: request.input,
    encoding_format: request.encodingFormat,
    ...(request.dimensions !== null && { dimensions: request.dimensions }),
    ...(request.user !== null && { user: request.user }),
  }),
};
