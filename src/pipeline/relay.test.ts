// pumpStream's backpressure on its own: the upstream body is paused only when the client's socket
// cannot take more, not because the turn's frames wait corked in the response.
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import type { FastifyReply } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { Cancellation } from "../core/cancellation.js";
import type { StreamTranslator } from "../upstreams/plan.js";
import { pumpStream } from "./relay.js";
import { createScrubber } from "./scrub.js";

const passThrough: StreamTranslator = {
  push: (event) => [{ data: event.data, raw: true }],
  end: () => [{ data: "[DONE]", raw: true }],
  fail: () => [],
  reportedUsage: () => null,
  deliveredText: () => "",
};

const FRAMES = 8;
const frame = (i: number) => `data: ${String(i).padStart(3, "0")}${"x".repeat(64 * 1024)}\n\n`; // 4× the buffer's mark

describe("pumpStream", () => {
  let server: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it("does not pause the upstream for frames larger than the buffer's mark while the client keeps up", async () => {
    let pausesAfterStart = -1;
    server = createServer((_req, res) => {
      const body = new PassThrough();
      const done = pumpStream({
        reply: { raw: res } as unknown as FastifyReply,
        body,
        firstChunk: Buffer.from(frame(0)),
        translator: passThrough,
        scrubber: createScrubber({ secrets: [], hosts: [] }),
        signal: new Cancellation(),
        open: () => res.writeHead(200, { "content-type": "text/event-stream" }),
      });
      pausesAfterStart = 0;
      body.on("pause", () => (pausesAfterStart += 1));
      void (async () => {
        for (let i = 1; i < FRAMES; i++) {
          await new Promise((resolve) => setImmediate(resolve)); // one frame per turn, as upstreams send them
          body.write(frame(i));
        }
        body.end();
        const result = await done;
        res.end("data: [DONE]\n\n");
        expect(result).toEqual({ end: "completed" });
      })();
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const text = await new Promise<string>((resolve, reject) => {
      request({ host: "127.0.0.1", port, method: "POST" }, (response) => {
        let received = "";
        response.setEncoding("utf8");
        response.on("data", (data: string) => (received += data)); // a client that reads at once
        response.on("end", () => resolve(received));
        response.on("error", reject);
      })
        .on("error", reject)
        .end();
    });
    const frames = text.split("\n\n").filter((f) => f.startsWith("data: "));
    expect(frames.map((f) => f.slice(6, 9))).toEqual([...Array.from({ length: FRAMES }, (_, i) => String(i).padStart(3, "0")), "[DO"]);
    expect(pausesAfterStart).toBe(0);
  });
});
