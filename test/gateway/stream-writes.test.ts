// How a relayed stream leaves the gateway's socket (src/pipeline/relay.ts): frames go out in the turn
// they arrive, never held back while the stream goes on; when the upstream's last frames and its end
// arrive together, they leave with the closing frame and the end of the response in one write.
import { request, type IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "upstream-gpt", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const USAGE = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "upstream-gpt", choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } })}\n\n`;

describe("stream writes", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let raw: string;
  /** Bytes of each write the gateway made on its client sockets, in order. */
  const writes: string[] = [];

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
    ({ raw } = await gateway.createAccount({ balance: "50" }));
    // Every socket-level write (one syscall each) of the gateway's responses.
    gateway.app.server.server.on("connection", (socket: Socket) => {
      const internals = socket as unknown as {
        _write(chunk: Buffer | string, encoding: BufferEncoding, cb: (error?: Error | null) => void): void;
        _writev(chunks: Array<{ chunk: Buffer | string }>, cb: (error?: Error | null) => void): void;
      };
      const write = internals._write.bind(socket);
      const writev = internals._writev.bind(socket);
      internals._write = (data, encoding, cb) => {
        writes.push(String(data));
        write(data, encoding, cb);
      };
      internals._writev = (chunks, cb) => {
        writes.push(chunks.map((c) => String(c.chunk)).join(""));
        writev(chunks, cb);
      };
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  function streamRequest(onData: (text: string) => void): Promise<string> {
    const body = JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], stream: true });
    return new Promise((resolve, reject) => {
      const req = request(
        `${gateway.url}/v1/chat/completions`,
        { method: "POST", headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" } },
        (response: IncomingMessage) => {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (data: string) => {
            text += data;
            onData(text);
          });
          response.on("end", () => resolve(text));
          response.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  it("sends the upstream's last frames, the closing frame and the end of the response in one write when they arrive together", async () => {
    mock.handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(chunk("Hello") + chunk(" world") + USAGE + "data: [DONE]\n\n");
    };
    writes.length = 0;
    const text = await streamRequest(() => undefined);
    expect(text).toContain('"content":"Hello"');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(writes).toHaveLength(1);
    expect(writes[0]).toMatch(/^HTTP\/1\.1 200/);
    expect(writes[0]).toContain('"content":" world"');
    expect(writes[0]!.endsWith("data: [DONE]\n\n\r\n0\r\n\r\n")).toBe(true);
  });

  it("does not hold a frame back while the stream goes on", async () => {
    let clientGotFirst: () => void = () => undefined;
    const firstArrived = new Promise<void>((resolve) => (clientGotFirst = resolve));
    mock.handler = async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk("first"));
      // The rest only once the client has the first frame: a frame held back would deadlock here.
      await firstArrived;
      res.end(chunk("second") + USAGE + "data: [DONE]\n\n");
    };
    writes.length = 0;
    const text = await streamRequest((received) => {
      if (received.includes('"content":"first"')) clientGotFirst();
    });
    expect(text).toContain('"content":"second"');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(writes).toHaveLength(2);
    expect(writes[0]).toContain('"content":"first"');
    expect(writes[0]).not.toContain('"content":"second"');
    expect(writes[1]).toContain('"content":"second"');
  }, 10_000);
});
