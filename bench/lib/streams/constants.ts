// Shared by the open-streams step's processes (bench/streams.ts): the paced mock, the client and
// the orchestrator.
/** The content of every token frame the paced mock sends; the client counts its occurrences. */
export const STREAM_TOKEN = " w";
/** The model of the step's config; the mock ignores the name. */
export const STREAMS_MODEL = "gpt-paced";

/** A streaming chat request for `tokens` tokens (the mock sends max_tokens of them), usage asked for. */
export function streamsBody(tokens: number): string {
  return JSON.stringify({
    model: STREAMS_MODEL,
    messages: [{ role: "user", content: "Tell me a long story." }],
    max_tokens: tokens,
    stream: true,
    stream_options: { include_usage: true },
  });
}
