// Reading upstream answers on the media routes. The requests themselves go through the pipeline:
// submits with failover (pipeline/forward.ts, via metered-call.ts), polls and downloads with the
// task's own key (sendToProvider in providers/upstream-client.ts).

/** Reads a whole upstream body up to a limit; null when it is larger (the rest is discarded). */
export async function readBounded(body: AsyncIterable<Buffer>, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body) {
    total += chunk.length;
    if (total > maxBytes) return null;
    chunks.push(chunk);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}
