// POST /v1/images/generations end to end with the official SDK against a mock upstream: pricing by
// size/quality and by reported tokens, failover, refusals, and scrubbing of the (large) answer.
import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { client, fakeImage, ledgerRows, mediaConfig, NANO_PER_USD, OPENAI_KEYS } from "./support.js";

const ORG = "org-CANARYorg12345678";
const OWN_KEY = "CANARYownKEY0123456789abcdefXYZ";

describe("images", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let openai: OpenAI;
  let accountId: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mediaConfig({ openaiUrl: mock.url }));
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(async () => {
    mock.requests.length = 0;
    const created = await gateway.createAccount({ balance: "10" });
    accountId = created.account.id;
    openai = client(gateway, created.raw);
  });

  const account = async () => (await gateway.app.ctx.store.accounts.get(accountId))!;

  it("generates, passes the base64 through byte for byte, and charges per image by size/quality", async () => {
    const images = [fakeImage(2_000_000, 1), fakeImage(2_000_000, 2)];
    mock.handler = (_req, res) => json(res, 200, { created: 1_760_000_000, data: images.map((b64_json) => ({ b64_json })), size: "1024x1024", quality: "high" });
    const { data: result, response } = await openai.images.generate({ model: "image-mock", prompt: "a red kite", n: 2, size: "1024x1024", quality: "high" }).withResponse();
    expect(result.data!.map((d) => d.b64_json)).toEqual(images);
    expect(response.headers.get("x-gateway-cost-usd")).toBe("0.40");
    expect(mock.requests[0]!.body).toMatchObject({ model: "upstream-image", prompt: "a red kite", n: 2, size: "1024x1024", quality: "high" });

    const rows = await ledgerRows(gateway, accountId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ route: "images", model: "image-mock", cost_nano: (40n * NANO_PER_USD) / 100n });
    const after = await account();
    expect(after.balance).toBe(10n * NANO_PER_USD - (40n * NANO_PER_USD) / 100n);
    expect(after.held).toBe(0n);
  });

  it("falls back from SIZE/QUALITY to SIZE to default, and charges only the images delivered", async () => {
    mock.handler = (_req, res) => json(res, 200, { created: 1, data: [{ b64_json: fakeImage(2000) }] });
    await openai.images.generate({ model: "image-mock", prompt: "x", n: 3, size: "1024x1024", quality: "low" });
    await openai.images.generate({ model: "image-mock", prompt: "x", size: "1536x1024" });
    const costs = (await ledgerRows(gateway, accountId)).map((r) => r.cost_nano);
    // 1 of 3 delivered at the 1024x1024 price; then the default price.
    expect(costs).toEqual([(5n * NANO_PER_USD) / 100n, (4n * NANO_PER_USD) / 100n]);
  });

  it("adds the token usage the upstream reports, priced by the model's token prices", async () => {
    mock.handler = (_req, res) =>
      json(res, 200, {
        created: 1,
        data: [{ b64_json: fakeImage(5000) }],
        usage: { input_tokens: 50, output_tokens: 4160, total_tokens: 4210, input_tokens_details: { text_tokens: 50, image_tokens: 0 } },
      });
    const { data, response } = await openai.images.generate({ model: "image-tokens", prompt: "a kite" }).withResponse();
    // 0.01 per image + 50 x 5/M + 4160 x 40/M = 0.01 + 0.00025 + 0.1664
    expect(response.headers.get("x-gateway-cost-usd")).toBe("0.17665");
    // The cost in-band too, in the body's usage object, and the body's length still right.
    expect(data.usage).toMatchObject({ input_tokens: 50, output_tokens: 4160, cost: "0.17665" });
    expect(data.data![0]!.b64_json).toBe(fakeImage(5000));
    const [row] = await ledgerRows(gateway, accountId);
    expect(row).toMatchObject({ input_tokens: 50n, output_tokens: 4160n, estimated: 0n, cost_nano: 176_650_000n });
  });

  it("counts an impossible token count the upstream reports (1e30, negative) as 0 and still charges the image", async () => {
    mock.handler = (_req, res) =>
      json(res, 200, { created: 1, data: [{ b64_json: fakeImage(5000) }], usage: { input_tokens: -50, output_tokens: 1e30, input_tokens_details: { cached_tokens: 2 ** 63 } } });
    const { response } = await openai.images.generate({ model: "image-tokens", prompt: "a kite" }).withResponse();
    expect(response.headers.get("x-gateway-cost-usd")).toBe("0.01");
    const [row] = await ledgerRows(gateway, accountId);
    expect(row).toMatchObject({ input_tokens: 0n, cached_tokens: 0n, output_tokens: 0n, cost_nano: NANO_PER_USD / 100n });
  });

  it("refuses a chat model with 400 invalid_request naming the model, without calling upstream", async () => {
    const error = (await openai.images.generate({ model: "gpt-mock", prompt: "x" }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ type: "invalid_request", param: "model" });
    expect(error.message).toContain("gpt-mock");
    expect(mock.requests).toHaveLength(0);
  });

  it("names the invalid field", async () => {
    for (const [body, param] of [
      [{ model: "image-mock", prompt: "x", n: 11 }, "n"],
      [{ model: "image-mock" }, "prompt"],
      [{ model: "image-mock", prompt: "x", size: "huge" }, "size"],
      [{ model: "image-mock", prompt: "x", quality: "ultra" }, "quality"],
      [{ model: "image-mock", prompt: "x", response_format: "gif" }, "response_format"],
      [{ prompt: "x" }, "model"],
    ] as const) {
      const error = (await openai.images.generate(body as never).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error.status).toBe(400);
      expect(error.error).toMatchObject({ type: "invalid_request", param });
    }
    const unknown = (await openai.images.generate({ model: "no-such-model", prompt: "x" }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.NotFoundError>;
    expect(unknown.status).toBe(404);
    expect(mock.requests).toHaveLength(0);
  });

  it("fails over on 429 and charges once", async () => {
    mock.handler = (_req, res) =>
      mock.requests.length === 1 ? json(res, 429, { error: { message: "slow down" } }) : json(res, 200, { created: 1, data: [{ b64_json: fakeImage(2000) }] });
    const { response } = await openai.images.generate({ model: "image-mock", prompt: "x" }).withResponse();
    expect(response.headers.get("x-gateway-attempts")).toBe("2");
    expect(new Set(mock.requests.map((r) => r.key))).toEqual(new Set(OPENAI_KEYS));
    expect(await ledgerRows(gateway, accountId)).toHaveLength(1);
  });

  it("an upstream error: mapped, scrubbed, hold released, nothing charged", async () => {
    mock.handler = (req, res) => json(res, 400, { error: { message: `bad prompt for key ${req.key} at ${mock.url}` } });
    const error = (await openai.images.generate({ model: "image-mock", prompt: "x" }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.BadRequestError>;
    expect(error.status).toBe(400);
    expect(error.message).not.toContain(mock.requests[0]!.key);
    expect(error.message).not.toContain(mock.host);
    expect(await ledgerRows(gateway, accountId)).toHaveLength(0);
    const after = await account();
    expect(after.held).toBe(0n);
    expect(after.balance).toBe(10n * NANO_PER_USD);
  });

  it("scrubs canaries around the images and leaves clean images untouched", async () => {
    const own = await gateway.createAccount({ balance: "10" });
    await gateway.app.ctx.store.upstreamKeys.add({ accountId: own.account.id, provider: "mockai", key: OWN_KEY });
    const clean = fakeImage(1_500_000, 3);
    const planted = fakeImage(600_000, 4);
    // A credential inside a base64 run: the image is sacrificed, the key never leaves.
    const dirty = planted.slice(0, 300_000) + OWN_KEY + planted.slice(300_000);
    mock.handler = (req, res) =>
      json(res, 200, {
        created: 1,
        data: [{ b64_json: clean, revised_prompt: `drawn with key ${req.key} at ${mock.url}/v1/images/generations` }, { b64_json: dirty }],
        organization: ORG,
        request_id: "req_CANARYrequest0123456789abcdef",
        note: `org ${ORG}`,
      });
    const response = await fetch(`${gateway.url}/v1/images/generations`, {
      method: "POST",
      headers: { authorization: `Bearer ${own.raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "image-mock", prompt: "x", n: 2 }),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    for (const canary of [OWN_KEY, ORG, mock.host, "req_CANARYrequest0123456789abcdef"]) expect(text).not.toContain(canary);
    const body = JSON.parse(text) as { data: Array<{ b64_json: string; revised_prompt?: string }> };
    expect(body.data[0]!.b64_json).toBe(clean);
    expect(body.data[0]!.revised_prompt).toContain("[redacted]");
    expect(body.data[1]!.b64_json).toContain("[redacted]");
    expect(Number(response.headers.get("content-length"))).toBe(Buffer.byteLength(text));
  });

  it("an answer that is not JSON is a provider_error and costs nothing", async () => {
    mock.handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(`{"data":[{"b64_json":"${fakeImage(5000)}"`);
    };
    const error = (await openai.images.generate({ model: "image-mock", prompt: "x" }).catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect(await ledgerRows(gateway, accountId)).toHaveLength(0);
    expect((await account()).held).toBe(0n);
  });
});
