// Video tasks over a Google long-running-operations upstream (Veo style): the same client surface
// as OpenAI Videos, a different adapter behind it. Plain fetch here (the gateway accepts JSON too),
// the SDK for polling and the download.
import OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { client, GOOGLE_KEY, ledgerRows, mediaConfig, NANO_PER_USD, pollUntilDone, VIDEO_BYTES } from "./support.js";

const MODEL_PATH = "/v1beta/models/veo-3.0-generate-001";

type Outcome = "done" | "error" | "filtered";

describe("videos over a Google operations upstream", () => {
  let mock: MockUpstream;
  let cdn: MockUpstream;
  let gateway: TestGateway;
  let openai: OpenAI;
  let raw: string;
  let accountId: string;
  let polls: number;

  beforeEach(async () => {
    mock = await startMockUpstream();
    cdn = await startMockUpstream();
    gateway = await startGateway(mediaConfig({ openaiUrl: mock.url, googleUrl: mock.url }));
    gateway.app.ctx.media.settings.videoPollIntervalMs = 20;
    const created = await gateway.createAccount({ balance: "10" });
    accountId = created.account.id;
    raw = created.raw;
    openai = client(gateway, raw);
    polls = 0;
    cdn.handler = (_req, res) => {
      res.writeHead(200, { "content-type": "video/mp4" });
      res.end(VIDEO_BYTES);
    };
  });
  afterEach(async () => {
    await gateway.close();
    await mock.close();
    await cdn.close();
  });

  function veo(outcome: Outcome) {
    mock.handler = (req, res) => {
      const path = req.url.split("?")[0]!;
      if (req.method === "POST" && path === `${MODEL_PATH}:predictLongRunning`) return json(res, 200, { name: "models/veo-3.0-generate-001/operations/op123" });
      if (req.method === "GET" && path === `${MODEL_PATH}/operations/op123`) {
        polls += 1;
        if (polls < 2) return json(res, 200, { name: "op123", done: false, metadata: { progressPercent: 40 } });
        if (outcome === "error") return json(res, 200, { name: "op123", done: true, error: { code: 3, message: `quota project for ${req.key} exhausted` } });
        if (outcome === "filtered")
          return json(res, 200, { name: "op123", done: true, response: { generateVideoResponse: { raiMediaFilteredCount: 1, raiMediaFilteredReasons: ["unsafe content"] } } });
        return json(res, 200, {
          name: "op123",
          done: true,
          response: { generateVideoResponse: { generatedSamples: [{ video: { uri: `${mock.url}/v1beta/files/f1:download?alt=media` } }] } },
        });
      }
      if (req.method === "GET" && path === "/v1beta/files/f1:download") {
        // The real API redirects to signed storage; the key must not follow the redirect.
        res.writeHead(302, { location: `${cdn.url}/blob/f1?sig=signed` });
        res.end();
        return;
      }
      return json(res, 404, { error: { message: `no route ${path}` } });
    };
  }

  const submit = (body: object) =>
    fetch(`${gateway.url}/v1/videos`, { method: "POST", headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  const account = async () => (await gateway.app.ctx.store.accounts.get(accountId))!;

  it("submits an operation, polls it to completion, settles the seconds asked for, and downloads the video", async () => {
    veo("done");
    const response = await submit({ model: "veo-mock", prompt: "a red kite", seconds: 8, size: "1280x720" });
    expect(response.status).toBe(200);
    const video = (await response.json()) as { id: string; status: string; seconds: string };
    expect(video).toMatchObject({ status: "queued", seconds: "8" });
    expect(JSON.stringify(video)).not.toMatch(/op123|operations|127\.0\.0\.1|AIza/);
    const sent = mock.requests[0]!;
    expect(sent.key).toBe(GOOGLE_KEY);
    expect(sent.body).toEqual({ instances: [{ prompt: "a red kite" }], parameters: { durationSeconds: 8, aspectRatio: "16:9", resolution: "720p" } });
    expect((await account()).held).toBe(4n * NANO_PER_USD);

    const done = await pollUntilDone(openai, video.id, "veo-mock");
    expect(done).toMatchObject({ status: "completed", seconds: "8", progress: 100 });
    const rows = await ledgerRows(gateway, accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ route: "videos", model: "veo-mock", provider: "mockgoogle", cost_nano: 4n * NANO_PER_USD });
    expect(await account()).toMatchObject({ balance: 6n * NANO_PER_USD, held: 0n });

    const content = await openai.videos.downloadContent(video.id);
    expect(content.headers.get("content-type")).toBe("video/mp4");
    expect(Buffer.from(await content.arrayBuffer()).equals(VIDEO_BYTES)).toBe(true);
    const download = mock.requests.find((r) => r.url.startsWith("/v1beta/files/f1"))!;
    expect(download.key).toBe(GOOGLE_KEY);
    expect(cdn.requests).toHaveLength(1);
    expect(cdn.requests[0]!.key).toBe("");
  });

  it("reports in-progress state between polls", async () => {
    veo("done");
    const video = (await (await submit({ model: "veo-mock", prompt: "x" })).json()) as { id: string };
    await new Promise((r) => setTimeout(r, 30));
    const polled = await openai.videos.retrieve(video.id, { query: { model: "veo-mock" } });
    expect(polled).toMatchObject({ status: "in_progress", progress: 40 });
  });

  for (const outcome of ["error", "filtered"] as const) {
    it(`a failed operation (${outcome}): hold released, nothing charged, message scrubbed`, async () => {
      veo(outcome);
      const video = (await (await submit({ model: "veo-mock", prompt: "x", seconds: 8 })).json()) as { id: string };
      const done = await pollUntilDone(openai, video.id, "veo-mock");
      expect(done.status).toBe("failed");
      expect(done.error?.message).not.toContain(GOOGLE_KEY);
      if (outcome === "filtered") expect(done.error?.message).toContain("unsafe content");
      expect(await ledgerRows(gateway, accountId)).toHaveLength(0);
      expect(await account()).toMatchObject({ balance: 10n * NANO_PER_USD, held: 0n });
      const response = await fetch(`${gateway.url}/v1/videos/${video.id}/content`, { headers: { authorization: `Bearer ${raw}` } });
      expect(response.status).toBe(409);
    });
  }

  it("an upstream that refuses the submit: error mapped, nothing held", async () => {
    mock.handler = (req, res) => json(res, 400, { error: { code: 400, message: `durationSeconds out of range for key ${req.key}` } });
    const response = await submit({ model: "veo-mock", prompt: "x", seconds: 12 });
    expect(response.status).toBe(400);
    const text = await response.text();
    expect(text).toContain("durationSeconds out of range");
    expect(text).not.toContain(GOOGLE_KEY);
    expect(await account()).toMatchObject({ balance: 10n * NANO_PER_USD, held: 0n });
  });

  it("an operation name that is not a plain path is refused, nothing held", async () => {
    mock.handler = (_req, res) => json(res, 200, { name: "../../admin/operations/x" });
    const response = await submit({ model: "veo-mock", prompt: "x" });
    expect(response.status).toBe(502);
    expect(await account()).toMatchObject({ held: 0n });
  });
});
