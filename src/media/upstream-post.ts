// Reading upstream answers on the media routes. The requests themselves go through the pipeline:
// submits with failover (pipeline/forward.ts, via metered-call.ts), polls and downloads with the
// task's own key (sendToProvider in upstreams/upstream-client.ts).
import { GatewayError } from "../errors/catalogue.js";
import { readBounded } from "../upstreams/upstream-client.js";

/** A whole 2xx answer of a buffered media route, up to a limit; a provider_error when it cannot be read or is larger. */
export async function readWholeAnswer(body: AsyncIterable<Buffer>, maxBytes: number): Promise<Buffer> {
  let bytes: Buffer | null;
  try {
    bytes = await readBounded(body, maxBytes);
  } catch {
    throw new GatewayError("provider_error", "The upstream answer could not be read.");
  }
  if (bytes === null) throw new GatewayError("provider_error", "The upstream answer is larger than the gateway accepts.");
  return bytes;
}
