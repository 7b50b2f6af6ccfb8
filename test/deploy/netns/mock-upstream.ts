// The upstream every gateway host calls: an OpenAI-compatible chat endpoint on the bridge's address,
// answering after a short delay (so that requests are in flight when a host dies), buffered or
// streamed in a few chunks, always with the same usage so that each answer costs the same.
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const UPSTREAM_USAGE = { prompt_tokens: 12, completion_tokens: 30, total_tokens: 42 };
const DELAY_MS = 60;

export interface NetnsUpstream {
  url: string;
  /** Chat requests received (the gateway's upstream attempts). */
  requests(): number;
  close(): Promise<void>;
}

export async function startNetnsUpstream(address: string): Promise<NetnsUpstream> {
  let requests = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      requests += 1;
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") as { stream?: boolean };
      setTimeout(() => (body.stream ? void stream(res) : buffered(res)), DELAY_MS);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${address}:${port}`,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function buffered(res: ServerResponse): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      id: "chatcmpl-netns",
      object: "chat.completion",
      created: 1_700_000_000,
      model: "upstream-chat",
      choices: [{ index: 0, message: { role: "assistant", content: "Fine, thanks." }, finish_reason: "stop", logprobs: null }],
      usage: UPSTREAM_USAGE,
    }),
  );
}

async function stream(res: ServerResponse): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream" });
  const chunk = (delta: object, finish: string | null) => ({
    id: "chatcmpl-netns",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "upstream-chat",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const frames = [chunk({ role: "assistant", content: "Fine" }, null), chunk({ content: ", " }, null), chunk({ content: "thanks." }, null), chunk({}, "stop")];
  for (const frame of frames) {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify(frame)}\n\n`);
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  res.write(
    `data: ${JSON.stringify({ id: "chatcmpl-netns", object: "chat.completion.chunk", created: 1_700_000_000, model: "upstream-chat", choices: [], usage: UPSTREAM_USAGE })}\n\n`,
  );
  res.end("data: [DONE]\n\n");
}
