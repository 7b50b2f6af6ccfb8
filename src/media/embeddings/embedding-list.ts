// OpenAI's embeddings list, built by the gateway for an upstream whose answer has another shape
// (an EmbeddingsApi with readAnswer). Such an upstream is asked for floats; a client that asked for
// base64 gets what OpenAI would have sent: each vector as little-endian float32, base64-encoded.
// (An OpenAI-shaped upstream is asked in the client's encoding and its answer is never re-encoded.)
import type { EmbeddingRequest } from "../../upstreams/embedding-request.js";

export interface EmbeddingList {
  object: "list";
  data: Array<{ object: "embedding"; index: number; embedding: number[] | string }>;
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

export function embeddingList(vectors: number[][], encoding: EmbeddingRequest["encodingFormat"], model: string, promptTokens: number): EmbeddingList {
  return {
    object: "list",
    data: vectors.map((vector, index) => ({ object: "embedding", index, embedding: encoding === "base64" ? float32Base64(vector) : vector })),
    model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

export function float32Base64(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, i) => bytes.writeFloatLE(value, i * 4));
  return bytes.toString("base64");
}
