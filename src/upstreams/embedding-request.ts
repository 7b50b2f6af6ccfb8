// An embeddings request as the routes parse it and the upstream types' embeddings APIs take it.
export type EmbeddingInput = string | string[] | number[] | number[][];

export interface EmbeddingRequest {
  model: string;
  input: EmbeddingInput;
  /** How many vectors the answer holds. */
  inputCount: number;
  /** Input tokens held at admission, and billed when the upstream reports none: token arrays exactly, text estimated. */
  projectedTokens: number;
  dimensions: number | null;
  /** OpenAI's default is float. */
  encodingFormat: "float" | "base64";
  user: string | null;
  /**
   * Google's per-input taskType and title (embedContent, batchEmbedContents), one per input; null
   * when the client sent none. Only a Gemini upstream has these fields: the others embed without them.
   */
  inputHints: ReadonlyArray<EmbeddingHint> | null;
}

export interface EmbeddingHint {
  taskType: string | null;
  title: string | null;
}
