// Rebuilding a session in a process that does not hold it (ADR 0045), with the SDK's public API only:
// the stored initialize request is handed to a new transport whose sessionIdGenerator answers the
// stored id, so the transport takes that id and the session server learns the client's capabilities
// and version as the first process did. The answer to the replayed initialize is read and dropped:
// the client had its own from the process that opened the session.
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";

/** The JSON-RPC id of a replayed initialize (never seen by a client). */
const REPLAY_ID = "model-gateway-session-replay";

/** The protocol version the SDK's server answers an initialize asking for `requested` with. */
export function negotiatedVersion(requested: string): string {
  return SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

/** Initializes the transport (and the server connected to it) with the stored initialize params. */
export async function replayInitialize(transport: WebStandardStreamableHTTPServerTransport, params: Record<string, unknown>): Promise<void> {
  const request = new Request("http://gateway/mcp", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
  });
  const response = await transport.handleRequest(request, { parsedBody: { jsonrpc: "2.0", id: REPLAY_ID, method: "initialize", params } });
  // The answer's stream ends once the server answered; reading it to the end waits for that.
  const text = await response.text();
  if (response.status !== 200 || !text.includes('"result"')) throw new Error(`the stored initialize was refused (HTTP ${response.status})`);
}
