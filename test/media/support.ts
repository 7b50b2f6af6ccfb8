// Config and scripted mock upstreams for the media suites: an OpenAI-compatible upstream speaking
// Images and Videos, and a Google long-running-operations upstream (Veo style).
import type { ServerResponse } from "node:http";
import OpenAI from "openai";
import { json, type MockUpstream, type RecordedRequest } from "../support/mock-upstream.js";
import type { TestGateway } from "../support/gateway.js";

export const OPENAI_KEYS = ["sk-mock-media-key-aaaaaaaaaaaa", "sk-mock-media-key-bbbbbbbbbbbb"];
export const GOOGLE_KEY = "AIzaMockGoogleKey0123456789abcdefghijklm";

export function mediaConfig(options: { openaiUrl: string; googleUrl?: string; openaiKeys?: string[] }): string {
  return `
providers:
  mockai:
    type: openai
    base_url: "${options.openaiUrl}/v1"
    keys: ${JSON.stringify(options.openaiKeys ?? OPENAI_KEYS)}
    apis: [chat, images, videos]
  mockgoogle:
    type: google-operations
    base_url: "${options.googleUrl ?? options.openaiUrl}/v1beta"
    keys: ["${GOOGLE_KEY}"]
models:
  - id: gpt-mock
    kind: chat
    provider: mockai
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
  - id: image-mock
    kind: image
    provider: mockai
    upstream_model: upstream-image
    pricing:
      per_image: { "1024x1024/high": "0.20", "1024x1024": "0.05", default: "0.04" }
  - id: image-tokens
    kind: image
    provider: mockai
    upstream_model: upstream-image-tokens
    default_output_tokens: 5000
    pricing:
      input_per_mtok: "5.00"
      output_per_mtok: "40.00"
      per_image: { default: "0.01" }
  - id: sora-mock
    kind: video
    provider: mockai
    upstream_model: sora-2
    pricing: { per_video_second: "0.10" }
  - id: veo-mock
    kind: video
    provider: mockgoogle
    upstream_model: veo-3.0-generate-001
    pricing: { per_video_second: "0.50" }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
`;
}

export function client(gateway: TestGateway, key: string): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
}

/** A base64 payload of about `bytes` characters: what a generated image looks like on the wire. */
export function fakeImage(bytes: number, seed = 1): string {
  const raw = Buffer.alloc(Math.ceil((bytes * 3) / 4));
  let x = seed;
  for (let i = 0; i < raw.length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    raw[i] = x & 0xff;
  }
  return raw.toString("base64");
}

export const VIDEO_BYTES = Buffer.from(fakeImage(300_000, 7), "base64");

export type Script = Array<{ status: "queued" | "in_progress" | "completed" | "failed"; progress?: number; seconds?: string; error?: string }>;

/**
 * An OpenAI Videos upstream: POST /v1/videos creates "sora_up_N"; each GET walks the task's script
 * one step (the last step repeats); /content serves VIDEO_BYTES. Other paths go to `fallback`.
 */
export function openaiVideos(mock: MockUpstream, script: () => Script, fallback?: (req: RecordedRequest, res: ServerResponse) => void) {
  const tasks = new Map<string, { step: number; script: Script }>();
  let created = 0;
  const polls: RecordedRequest[] = [];
  mock.handler = (req, res) => {
    const path = req.url.split("?")[0]!;
    if (req.method === "POST" && path === "/v1/videos") {
      created += 1;
      const id = `sora_up_${created}`;
      tasks.set(id, { step: 0, script: script() });
      return json(res, 200, { id, object: "video", model: "sora-2", status: "queued", progress: 0, created_at: 1, seconds: "8", size: "720x1280" });
    }
    const content = /^\/v1\/videos\/([^/]+)\/content$/.exec(path);
    if (req.method === "GET" && content && tasks.has(content[1]!)) {
      res.writeHead(200, { "content-type": "video/mp4", "content-length": String(VIDEO_BYTES.length) });
      res.end(VIDEO_BYTES);
      return;
    }
    const poll = /^\/v1\/videos\/([^/]+)$/.exec(path);
    if (req.method === "GET" && poll) {
      const task = tasks.get(poll[1]!);
      if (!task) return json(res, 404, { error: { message: "no such video" } });
      polls.push(req);
      const step = task.script[Math.min(task.step, task.script.length - 1)]!;
      task.step += 1;
      return json(res, 200, {
        id: poll[1],
        object: "video",
        model: "sora-2",
        status: step.status,
        progress: step.progress ?? (step.status === "completed" ? 100 : 0),
        seconds: step.seconds ?? "8",
        created_at: 1,
        error: step.error ? { code: "upstream_failure", message: step.error } : null,
      });
    }
    if (fallback) return fallback(req, res);
    return json(res, 404, { error: { message: `no route ${req.method} ${path}` } });
  };
  return { polls, tasks };
}

export async function pollUntilDone(openai: OpenAI, id: string, model: string, limit = 200) {
  for (let i = 0; i < limit; i++) {
    const video = await openai.videos.retrieve(id, { query: { model } });
    if (video.status === "completed" || video.status === "failed") return video;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`video ${id} did not finish`);
}

export async function ledgerRows(gateway: TestGateway, accountId: string) {
  return gateway.app.ctx.store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).where("kind", "=", "usage").execute();
}

export const NANO_PER_USD = 1_000_000_000n;
