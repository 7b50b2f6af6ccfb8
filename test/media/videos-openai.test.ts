// Video tasks over an OpenAI Videos upstream, end to end with the official SDK: submit (multipart)
// with failover, polling (rate limited, with the creating key), settlement and release, content
// download, refusals, and a gateway restart between submit and completion.
import OpenAI, { toFile } from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VideoTaskService } from "../../src/media/videos/video-task-service.js";
import { json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { client, ledgerRows, mediaConfig, NANO_PER_USD, openaiVideos, pollUntilDone, VIDEO_BYTES, type Script } from "./support.js";

const completesAfterTwo: Script = [
  { status: "in_progress", progress: 30 },
  { status: "in_progress", progress: 70 },
  { status: "completed", seconds: "8" },
];

describe.each(DATABASE_KINDS)("videos over an OpenAI Videos upstream (%s)", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let openai: OpenAI;
  let raw: string;
  let accountId: string;

  beforeEach(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mediaConfig({ openaiUrl: mock.url }), { kind });
    gateway.app.ctx.media.settings.videoPollIntervalMs = 20;
    const created = await gateway.createAccount({ balance: "10" });
    accountId = created.account.id;
    raw = created.raw;
    openai = client(gateway, raw);
  });
  afterEach(async () => {
    await gateway.close();
    await mock.close();
  });

  const account = async (g = gateway) => (await g.app.ctx.store.accounts.get(accountId))!;
  const usd = (cents: bigint) => (cents * NANO_PER_USD) / 100n;

  it("bills the seconds asked for when the upstream reports an impossible duration (1e30 s)", async () => {
    openaiVideos(mock, () => [{ status: "completed", seconds: "1e30" }]);
    const video = await openai.videos.create({ model: "sora-mock", prompt: "a red kite", seconds: "12" });
    const done = await pollUntilDone(openai, video.id, "sora-mock");
    expect(done).toMatchObject({ status: "completed", seconds: "12" });
    const rows = await ledgerRows(gateway, accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ route: "videos", cost_nano: usd(120n) });
    expect((await account()).held).toBe(0n);
  });

  it("submits, polls to completion, settles the actual seconds once, and streams the content", async () => {
    const upstream = openaiVideos(mock, () => completesAfterTwo);
    const video = await openai.videos.create({ model: "sora-mock", prompt: "a red kite", seconds: "12" });
    expect(video).toMatchObject({ object: "video", model: "sora-mock", status: "queued", seconds: "12" });
    expect(video.id).toMatch(/^video_/);
    expect(JSON.stringify(video)).not.toMatch(/sora_up_|127\.0\.0\.1|sk-mock/);
    // The submit went out as multipart with the upstream model and the seconds asked for.
    const submit = mock.requests[0]!;
    expect(submit.headers["content-type"]).toMatch(/^multipart\/form-data/);
    expect(String(submit.body)).toContain("sora-2");
    expect(String(submit.body)).toContain("a red kite");
    // 12 s x 0.10 held until the task ends.
    expect((await account()).held).toBe(usd(120n));

    const done = await pollUntilDone(openai, video.id, "sora-mock");
    expect(done).toMatchObject({ status: "completed", progress: 100, seconds: "8", error: null });
    expect(done.completed_at).toEqual(expect.any(Number));
    // Settled at the 8 s the upstream produced, exactly once however often the client polls on.
    for (let i = 0; i < 3; i++) await openai.videos.retrieve(video.id, { query: { model: "sora-mock" } });
    const rows = await ledgerRows(gateway, accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ route: "videos", model: "sora-mock", cost_nano: usd(80n) });
    const after = await account();
    expect(after.balance).toBe(10n * NANO_PER_USD - usd(80n));
    expect(after.held).toBe(0n);
    // Polls used the key that created the task.
    expect(new Set(upstream.polls.map((p) => p.key))).toEqual(new Set([submit.key]));

    const content = await openai.videos.downloadContent(video.id);
    expect(content.headers.get("content-type")).toBe("video/mp4");
    expect(Buffer.from(await content.arrayBuffer()).equals(VIDEO_BYTES)).toBe(true);
  });

  it("forwards an uploaded input_reference image as a file", async () => {
    openaiVideos(mock, () => completesAfterTwo);
    const image = await toFile(Buffer.from("PNGDATA-0123456789"), "start.png", { type: "image/png" });
    const video = await openai.videos.create({ model: "sora-mock", prompt: "from this frame", input_reference: image });
    expect(video.status).toBe("queued");
    const body = String(mock.requests[0]!.body);
    expect(body).toMatch(/name="input_reference"; filename="start.png"/);
    expect(body).toContain("PNGDATA-0123456789");
  });

  it("pipes the content as it arrives instead of buffering it", async () => {
    openaiVideos(mock, () => [{ status: "completed", seconds: "4" }]);
    const inner = mock.handler;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let upstreamFinished = false;
    mock.handler = async (req, res) => {
      if (!req.url.includes("/content")) return inner(req, res);
      res.writeHead(200, { "content-type": "video/mp4" });
      res.write(Buffer.alloc(64 * 1024, 1));
      // The rest only once the client has seen the first bytes (or after 5 s, to fail cleanly).
      await Promise.race([released, new Promise((r) => setTimeout(r, 5_000))]);
      upstreamFinished = true;
      res.end(Buffer.alloc(64 * 1024, 2));
    };
    const video = await openai.videos.create({ model: "sora-mock", prompt: "x" });
    await pollUntilDone(openai, video.id, "sora-mock");
    const response = await fetch(`${gateway.url}/v1/videos/${video.id}/content`, { headers: { authorization: `Bearer ${raw}` } });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.value!.length).toBeGreaterThan(0);
    expect(upstreamFinished).toBe(false);
    release();
    let total = first.value!.length;
    for (let next = await reader.read(); !next.done; next = await reader.read()) total += next.value.length;
    expect(total).toBe(128 * 1024);
  });

  it("a failed task: scrubbed error, hold released, nothing charged", async () => {
    openaiVideos(mock, () => [{ status: "in_progress" }, { status: "failed", error: `moderation blocked it (key ${"sk-mock-media-key-aaaaaaaaaaaa"} at ${mock.url})` }]);
    const video = await openai.videos.create({ model: "sora-mock", prompt: "x", seconds: "4" });
    const done = await pollUntilDone(openai, video.id, "sora-mock");
    expect(done.status).toBe("failed");
    expect(done.error?.code).toBe("video_generation_failed");
    expect(done.error?.message).toContain("moderation blocked it");
    expect(done.error?.message).not.toContain("sk-mock-media-key");
    expect(done.error?.message).not.toContain(mock.host);
    expect(await ledgerRows(gateway, accountId)).toHaveLength(0);
    const after = await account();
    expect(after.balance).toBe(10n * NANO_PER_USD);
    expect(after.held).toBe(0n);
    const error = (await openai.videos.downloadContent(video.id).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(409);
    expect(error.error).toMatchObject({ type: "invalid_state" });
  });

  it("a failed task's message and a download error do not name the ids the answer's headers carry", async () => {
    const ids = { "x-request-id": "7c9e6679-7425-40de-944b-e07fc1f66afe", "openai-organization": "user-q7x2k9m4p1z8" };
    const leak = `for ${ids["x-request-id"]} in ${ids["openai-organization"]}`;
    openaiVideos(mock, () => [{ status: "in_progress" }, { status: "failed", error: `moderation blocked it ${leak}` }]);
    const inner = mock.handler;
    mock.handler = (req, res) => {
      for (const [name, value] of Object.entries(ids)) res.setHeader(name, value);
      return inner(req, res);
    };
    const failed = await pollUntilDone(openai, (await openai.videos.create({ model: "sora-mock", prompt: "x", seconds: "4" })).id, "sora-mock");
    expect(failed.error?.message).toContain("moderation blocked it for [redacted] in [redacted]");

    openaiVideos(mock, () => completesAfterTwo, undefined);
    const videos = mock.handler;
    mock.handler = (req, res) => {
      if (req.url.includes("/content")) return json(res, 400, { error: { message: `variant unavailable ${leak}` } }, ids);
      return videos(req, res);
    };
    const done = await pollUntilDone(openai, (await openai.videos.create({ model: "sora-mock", prompt: "x", seconds: "4" })).id, "sora-mock");
    const error = (await openai.videos.downloadContent(done.id).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(400);
    expect(JSON.stringify(error.error)).toContain("variant unavailable for [redacted] in [redacted]");

    mock.handler = (_req, res) => json(res, 200, { id: "sora_up_x", object: "video", status: "failed", progress: 0, error: { message: `refused ${leak}` } }, ids);
    const refused = await openai.videos.create({ model: "sora-mock", prompt: "x", seconds: "4" });
    expect(refused.status).toBe("failed");
    expect(refused.error?.message).toContain("refused for [redacted] in [redacted]");
  });

  it("fails over on a 429 at submit, then polls with the key that accepted the task", async () => {
    const upstream = openaiVideos(mock, () => completesAfterTwo);
    const inner = mock.handler;
    let first = true;
    mock.handler = (req, res) => {
      if (req.method === "POST" && first) {
        first = false;
        return json(res, 429, { error: { message: "slow down" } }, { "retry-after": "30" });
      }
      return inner(req, res);
    };
    const { data: video, response } = await openai.videos.create({ model: "sora-mock", prompt: "x" }).withResponse();
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    const [limited, accepted] = mock.requests;
    expect(limited!.key).not.toBe(accepted!.key);
    expect(video.seconds).toBe("4"); // the documented default, held and sent upstream
    expect(String(accepted!.body)).toMatch(/name="seconds"\r\n\r\n4\r\n/);
    await pollUntilDone(openai, video.id, "sora-mock");
    expect(new Set(upstream.polls.map((p) => p.key))).toEqual(new Set([accepted!.key]));
  });

  it("every key 429 at submit: 429 with Retry-After, no task, nothing held", async () => {
    mock.handler = (_req, res) => json(res, 429, { error: { message: "limit" } }, { "retry-after": "9" });
    const error = (await openai.videos.create({ model: "sora-mock", prompt: "x" }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.RateLimitError>;
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.headers?.get("retry-after")).toBe("9");
    expect(await gateway.app.ctx.store.db.selectFrom("video_tasks").selectAll().execute()).toHaveLength(0);
    expect((await account()).held).toBe(0n);
  });

  it("rate-limits upstream polls while a client polls in a tight loop", async () => {
    gateway.app.ctx.media.settings.videoPollIntervalMs = 300;
    const upstream = openaiVideos(mock, () => [{ status: "in_progress", progress: 10 }]);
    const video = await openai.videos.create({ model: "sora-mock", prompt: "x" });
    const started = Date.now();
    let clientPolls = 0;
    while (Date.now() - started < 1_000) {
      const polled = await openai.videos.retrieve(video.id, { query: { model: "sora-mock" } });
      expect(polled.status).toMatch(/queued|in_progress/);
      clientPolls += 1;
    }
    const elapsed = Date.now() - started;
    expect(clientPolls).toBeGreaterThan(20);
    expect(upstream.polls.length).toBeGreaterThanOrEqual(2);
    expect(upstream.polls.length).toBeLessThanOrEqual(Math.floor(elapsed / 300) + 1);
  });

  it("rate-limits upstream polls across gateway processes sharing one database", async () => {
    gateway.app.ctx.media.settings.videoPollIntervalMs = 300;
    const upstream = openaiVideos(mock, () => [{ status: "in_progress", progress: 10 }]);
    const video = await openai.videos.create({ model: "sora-mock", prompt: "x" });
    const peer = await startGateway(mediaConfig({ openaiUrl: mock.url }), { database: gateway.database });
    try {
      peer.app.ctx.media.settings.videoPollIntervalMs = 300;
      const clients = [openai, client(peer, raw)];
      const started = Date.now();
      const loop = async (c: OpenAI) => {
        while (Date.now() - started < 1_000) await c.videos.retrieve(video.id, { query: { model: "sora-mock" } });
      };
      await Promise.all([loop(clients[0]!), loop(clients[1]!), loop(clients[0]!), loop(clients[1]!)]);
      expect(upstream.polls.length).toBeLessThanOrEqual(Math.floor((Date.now() - started) / 300) + 1);
    } finally {
      await peer.app.close();
    }
  });

  it("refuses another account's task (404), a missing or wrong model (400), an unknown id (404)", async () => {
    openaiVideos(mock, () => completesAfterTwo);
    const video = await openai.videos.create({ model: "sora-mock", prompt: "x" });
    const other = client(gateway, (await gateway.createAccount()).raw);
    const expectError = async (promise: Promise<unknown>, status: number, type: string, param?: string) => {
      const error = (await promise.catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
      expect(error.status).toBe(status);
      expect(error.error).toMatchObject({ type, ...(param && { param }) });
      expect(error.headers?.get("x-request-id")).toMatch(/^req_/);
    };
    await expectError(other.videos.retrieve(video.id, { query: { model: "sora-mock" } }), 404, "not_found");
    await expectError(other.videos.downloadContent(video.id), 404, "not_found");
    await expectError(openai.videos.retrieve(video.id), 400, "invalid_request", "model");
    await expectError(openai.videos.retrieve(video.id, { query: { model: "veo-mock" } }), 400, "invalid_request", "model");
    await expectError(openai.videos.retrieve("video_doesnotexist", { query: { model: "sora-mock" } }), 404, "not_found");
    await expectError(openai.videos.create({ model: "image-mock", prompt: "x" }), 400, "invalid_request", "model");
    await expectError(openai.videos.create({ model: "sora-mock", prompt: "x", seconds: "0" as never }), 400, "invalid_request", "seconds");
    // Before completion the content is not there yet.
    await expectError(openai.videos.downloadContent(video.id), 409, "invalid_state");
  });

  it("survives a gateway restart between submit and completion", async () => {
    const upstream = openaiVideos(mock, () => [
      { status: "in_progress", progress: 40 },
      { status: "completed", seconds: "8" },
    ]);
    const video = await openai.videos.create({ model: "sora-mock", prompt: "x", seconds: "8" });
    const submitKey = mock.requests[0]!.key;
    const database = gateway.database;
    await gateway.app.close();

    const second = await startGateway(mediaConfig({ openaiUrl: mock.url }), { database });
    try {
      second.app.ctx.media.settings.videoPollIntervalMs = 20;
      const again = client(second, raw);
      const done = await pollUntilDone(again, video.id, "sora-mock");
      expect(done.status).toBe("completed");
      expect(new Set(upstream.polls.map((p) => p.key))).toEqual(new Set([submitKey]));
      const rows = await ledgerRows(second, accountId);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.cost_nano).toBe(usd(80n));
      const after = await account(second);
      expect(after.balance).toBe(10n * NANO_PER_USD - usd(80n));
      expect(after.held).toBe(0n);
      const content = await again.videos.downloadContent(video.id);
      expect(Buffer.from(await content.arrayBuffer()).equals(VIDEO_BYTES)).toBe(true);
    } finally {
      await second.app.close();
    }
  });

  it("finishes and settles a task nobody polls, through the background refresher", async () => {
    openaiVideos(mock, () => [{ status: "completed", seconds: "4" }]);
    const video = await openai.videos.create({ model: "sora-mock", prompt: "x", seconds: "4" });
    await new Promise((r) => setTimeout(r, 30));
    const refreshed = await gatewayTasks(gateway).refreshStale(Date.now() + 120_000);
    expect(refreshed).toBe(1);
    expect((await ledgerRows(gateway, accountId))[0]!.cost_nano).toBe(usd(40n));
    const polled = await openai.videos.retrieve(video.id, { query: { model: "sora-mock" } });
    expect(polled.status).toBe("completed");
  });

  it("expires a task that outlives its lifetime: hold released, nothing charged", async () => {
    openaiVideos(mock, () => [{ status: "in_progress" }]);
    const video = await openai.videos.create({ model: "sora-mock", prompt: "x" });
    gateway.app.ctx.media.settings.videoTaskTtlMs = 50;
    await new Promise((r) => setTimeout(r, 80));
    const polled = await openai.videos.retrieve(video.id, { query: { model: "sora-mock" } });
    expect(polled).toMatchObject({ status: "failed", error: { code: "video_expired" } });
    expect(await ledgerRows(gateway, accountId)).toHaveLength(0);
    expect((await account()).held).toBe(0n);
  });
});

/** The task service behind the routes, reached through a fresh instance over the same app context. */
function gatewayTasks(gateway: TestGateway) {
  return new VideoTaskService(gateway.app.ctx.live, gateway.app.ctx.logger);
}
