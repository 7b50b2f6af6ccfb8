// Streams relay with backpressure (src/pipeline/relay.ts): while a client does not read, the gateway
// stops reading the upstream (which then cannot write either) instead of buffering the stream in
// memory; once the client reads again, every byte arrives, in order, and the request is billed.
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

const CHUNKS = 3072;
const PIECE = "x".repeat(16 * 1024 - 8) + "-piece-!"; // 16 KiB of content per chunk, 48 MiB in all

describe("stream backpressure", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let upstreamWritten = 0;
  let upstreamDone = false;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      let i = 0;
      const next = () => {
        while (i < CHUNKS) {
          const frame = `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "upstream-gpt", choices: [{ index: 0, delta: { content: PIECE }, finish_reason: null }] })}\n\n`;
          i += 1;
          upstreamWritten += frame.length;
          if (!res.write(frame)) return void res.once("drain", next);
        }
        res.end(
          `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "upstream-gpt", choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } })}\n\ndata: [DONE]\n\n`,
        );
        upstreamDone = true;
      };
      next();
    };
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("pauses the upstream while the client does not read, then delivers everything in order", async () => {
    const { raw, key } = await gateway.createAccount({ balance: "50" });
    const url = new URL(`${gateway.url}/v1/chat/completions`);
    const body = JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], stream: true });
    const response = await new Promise<import("node:http").IncomingMessage>((resolve, reject) => {
      const req = request(url, { method: "POST", headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" } }, resolve);
      req.on("error", reject);
      req.end(body);
    });
    expect(response.statusCode).toBe(200);
    response.pause(); // the client stops reading

    // The socket buffers between the upstream and the client fill first; on a busy machine (CI runs
    // test files in parallel) that can take more than a second. Wait until the upstream stops.
    let stalledAt = -1;
    for (const deadline = Date.now() + 15_000; stalledAt < 0 && Date.now() < deadline;) {
      const before = upstreamWritten;
      await sleep(500);
      if (upstreamWritten === before) stalledAt = before;
    }
    await sleep(500);
    // The upstream made no progress while the client did not read, and is far from done.
    expect(stalledAt).toBeGreaterThan(0);
    expect(upstreamWritten).toBe(stalledAt);
    expect(upstreamDone).toBe(false);
    expect(stalledAt).toBeLessThan(CHUNKS * PIECE.length * 0.75);

    let text = "";
    response.setEncoding("utf8");
    response.on("data", (chunk: string) => (text += chunk));
    response.resume();
    await new Promise((resolve) => response.once("end", resolve));
    expect(upstreamDone).toBe(true);
    const frames = text.split("\n\n").filter((f) => f.startsWith("data: "));
    expect(frames.at(-1)).toBe("data: [DONE]");
    const contents = frames.slice(0, -1).map((f) => (JSON.parse(f.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? "");
    expect(contents.filter((c) => c === PIECE)).toHaveLength(CHUNKS);

    let rows: Array<{ output_tokens: bigint; estimated: bigint }> = [];
    for (let i = 0; i < 100 && rows.length === 0; i++) {
      rows = await gateway.app.ctx.store.db.selectFrom("ledger").select(["output_tokens", "estimated"]).where("key_id", "=", key.id).execute();
      if (rows.length === 0) await sleep(20);
    }
    expect(rows).toEqual([{ output_tokens: 7n, estimated: 0n }]);
  }, 30_000);
});
