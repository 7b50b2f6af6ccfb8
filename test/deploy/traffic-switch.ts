// The load balancer of the rolling-upgrade test and its steady load. The switch is an HTTP proxy on
// 127.0.0.1 that sends each request to the gateway it points at (a connection of its own per
// request, so that pointing it elsewhere moves every next request at once, as a load balancer
// taking a backend out of rotation does) and names that gateway in a response header. The load is a
// few clients looping over buffered and streamed chat completions until stopped, each outcome kept.
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export const SERVED_BY_HEADER = "x-test-served-by";

export interface TrafficSwitch {
  url: string;
  /** Every next request goes to 127.0.0.1:port, named `label` in SERVED_BY_HEADER. */
  point(port: number, label: string): void;
  close(): Promise<void>;
}

export async function startTrafficSwitch(): Promise<TrafficSwitch> {
  let target: { port: number; label: string } | null = null;
  const server: Server = createServer((req, res) => {
    const backend = target;
    if (!backend) {
      res.writeHead(503).end("no backend");
      return;
    }
    const forwarded = httpRequest(
      { host: "127.0.0.1", port: backend.port, method: req.method, path: req.url, headers: { ...req.headers, connection: "close" }, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, { ...answer.headers, [SERVED_BY_HEADER]: backend.label });
        answer.pipe(res);
        answer.on("error", () => res.destroy());
      },
    );
    // A backend that refuses or drops the request: the client sees a failure, never a made-up answer.
    forwarded.on("error", () => (res.headersSent ? res.destroy() : res.writeHead(502, { [SERVED_BY_HEADER]: backend.label }).end("backend failed")));
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    point: (backendPort, label) => {
      target = { port: backendPort, label };
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Outcome {
  ok: boolean;
  stream: boolean;
  status: number;
  requestId: string | null;
  servedBy: string | null;
  /** Why it failed: status, body or error text (no prompt text: the load's own fixed words). */
  detail: string;
}

export interface Load {
  outcomes: Outcome[];
  /** Successful requests served by `label` so far. */
  served(label: string): number;
  stop(): Promise<void>;
}

/** Chat completions to `url` with `keys` in turn, buffered and streamed alternately, from `clients` loops. */
export function startLoad(url: string, keys: string[], expectedText: string, clients: number): Load {
  const outcomes: Outcome[] = [];
  let stopping = false;
  let turn = 0;
  const loops = Array.from({ length: clients }, async () => {
    while (!stopping) {
      const n = turn++;
      outcomes.push(await chatOnce(url, keys[n % keys.length]!, n % 2 === 1, expectedText));
    }
  });
  return {
    outcomes,
    served: (label) => outcomes.filter((outcome) => outcome.ok && outcome.servedBy === label).length,
    stop: async () => {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

export async function chatOnce(url: string, key: string, stream: boolean, expectedText: string): Promise<Outcome> {
  const base = { stream, status: 0, requestId: null, servedBy: null };
  try {
    const response = await fetch(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "upgrade load" }], max_tokens: 50, stream }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    const answered = { stream, status: response.status, requestId: response.headers.get("x-request-id"), servedBy: response.headers.get(SERVED_BY_HEADER) };
    if (response.status !== 200) return { ...answered, ok: false, detail: text.slice(0, 300) };
    const complete = stream ? text.includes("data: [DONE]") && !text.includes('"error"') && streamedText(text) === expectedText : bufferedText(text) === expectedText;
    return { ...answered, ok: complete && answered.requestId !== null, detail: complete ? "" : `incomplete answer: ${text.slice(0, 300)}` };
  } catch (error) {
    return { ...base, ok: false, detail: String(error) };
  }
}

function bufferedText(text: string): string | undefined {
  try {
    return (JSON.parse(text) as { choices?: Array<{ message?: { content?: string } }> }).choices?.[0]?.message?.content;
  } catch {
    return undefined;
  }
}

function streamedText(text: string): string {
  let content = "";
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    const chunk = JSON.parse(line.slice(6)) as { choices?: Array<{ delta?: { content?: string } }> };
    content += chunk.choices?.[0]?.delta?.content ?? "";
  }
  return content;
}
