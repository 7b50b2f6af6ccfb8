// The metering sequence on its own (admit -> forward with failover -> release or hand back), with a
// failure injected at each step: whatever fails, a placed hold is released exactly once and nothing
// is charged. The upstream is a local HTTP server; billing is a recording fake.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { AdmissionRequest, Billing, Charge, Hold } from "../billing/types.js";
import type { ModelConfig, ProviderConfig } from "../config/load.js";
import { Cancellation } from "../core/cancellation.js";
import { GatewayError } from "../errors/catalogue.js";
import type { Store } from "../store/index.js";
import type { UpstreamHealthStore } from "../store/upstream-health-store.js";
import { DEFAULT_BREAKER_SETTINGS } from "../upstreams/circuit-breaker.js";
import { UpstreamHealth } from "../upstreams/upstream-health.js";
import { KeyRotation } from "./failover.js";
import { LimitRefusal, type Headroom } from "../billing/admission.js";
import { MAX_ADMISSION_ATTEMPTS, MeteredCall, openMeteredCall, type MeteredRequest, type MeteringServices } from "./metered-call.js";
import { createScrubber } from "./scrub.js";
import { UpstreamKeyResolver } from "./upstream-key-resolver.js";

const KEYS = ["sk-metered-test-key-one", "sk-metered-test-key-two"];
const USAGE = { inputTokens: 5, cachedInputTokens: 0, outputTokens: 7, reasoningTokens: 0, estimated: false };

class RecordingBilling implements Billing {
  admitted = 0;
  released: string[] = [];
  settled: string[] = [];
  refuse: GatewayError | null = null;
  /** Refusals answered first, one per admission, before `refuse`. */
  refusals: GatewayError[] = [];
  /** The output projection of each admission asked for. */
  projections: number[] = [];

  async admit(request: AdmissionRequest): Promise<Hold> {
    this.projections.push(request.projectedOutputTokens);
    const next = this.refusals.shift();
    if (next) throw next;
    if (this.refuse) throw this.refuse;
    this.admitted += 1;
    const { requestId, accountId, keyId, model, route } = request;
    return { id: `hold_${this.admitted}`, requestId, accountId, keyId, amount: 1_000n, tokens: 12, model, route };
  }

  async settle(hold: Hold): Promise<Charge> {
    this.settled.push(hold.id);
    return { cost: 500n, recorded: true };
  }

  async release(hold: Hold): Promise<void> {
    this.released.push(hold.id);
  }
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let handler: Handler;
let requests: Array<{ key: string; closedEarly: Promise<boolean> }>;
let billing: RecordingBilling;
let services: MeteringServices;

beforeAll(async () => {
  server = createServer((req, res) => {
    const closedEarly = new Promise<boolean>((resolve) => res.on("close", () => resolve(!res.writableFinished)));
    requests.push({ key: String(req.headers.authorization ?? "").replace("Bearer ", ""), closedEarly });
    req.resume();
    req.on("end", () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  requests = [];
  handler = (_req, res) => answer(res, 200, { ok: true });
  billing = new RecordingBilling();
  const noOwnKeys = { upstreamKeys: { secretsByProvider: async () => new Map<string, string[]>() } } as unknown as Store;
  const scrubber = createScrubber({ secrets: KEYS, hosts: [baseUrl] });
  const health = new UpstreamHealth({ writeState: async () => undefined } as unknown as UpstreamHealthStore, DEFAULT_BREAKER_SETTINGS, pino({ level: "silent" }));
  services = { billing, rotation: new KeyRotation(), health, scrubber, upstreamKeys: new UpstreamKeyResolver(noOwnKeys, () => scrubber) };
});

function answer(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

function metered(options: { baseUrl?: string; signal?: Cancellation; stream?: boolean; build?: MeteredRequest["build"] } = {}): MeteredRequest {
  const provider: ProviderConfig = {
    name: "mock",
    type: "openai",
    baseUrl: options.baseUrl ?? baseUrl,
    sharedKeys: KEYS,
    apis: new Set(["chat"]),
    headers: {},
    timeoutMs: 5_000,
    connectTimeoutMs: 1_000,
    maxConnections: 16,
    connectionWaitMs: 1000,
    http2: false,
  };
  const model: ModelConfig = {
    id: "mock-model",
    kind: "chat",
    provider,
    upstreamModel: "mock-model",
    contextWindow: null,
    maxOutputTokens: null,
    defaultOutputTokens: 100,
    modalities: { input: ["text"], output: ["text"] },
    pricing: {
      inputPerMtok: 1_000n,
      cachedInputPerMtok: 0n,
      cacheWrite5mPerMtok: 1_000n,
      cacheWrite1hPerMtok: 1_000n,
      webSearchPerCall: 0n,
      perRequest: 0n,
      outputPerMtok: 1_000n,
      perImage: new Map(),
      perVideoSecond: 0n,
    },
    tiers: ["free"],
  };
  return {
    admission: { requestId: "req_test", accountId: "acct_test", keyId: "key_test", model, route: "chat", projectedInputTokens: 5, projectedOutputTokens: 100 },
    build: options.build ?? ((key) => ({ url: `${provider.baseUrl}/v1/chat/completions`, method: "POST", headers: { authorization: `Bearer ${key}` }, body: "{}" })),
    awaitFirstChunk: options.stream ?? false,
    signal: options.signal ?? new Cancellation(),
    onAttempt: () => undefined,
  };
}

/** Released exactly once, never settled. */
function expectReleasedOnce(): void {
  expect(billing.admitted).toBe(1);
  expect(billing.released).toEqual(["hold_1"]);
  expect(billing.settled).toEqual([]);
}

describe("openMeteredCall: a failure at each step", () => {
  it("admission refused: nothing held, nothing sent upstream, nothing charged", async () => {
    billing.refuse = new GatewayError("quota_exceeded");
    await expect(openMeteredCall(services, metered())).rejects.toMatchObject({ type: "quota_exceeded" });
    expect(billing.released).toEqual([]);
    expect(billing.settled).toEqual([]);
    expect(requests).toHaveLength(0);
  });

  it("forward throws (building the upstream request fails): the hold is released once", async () => {
    const build = () => {
      throw new Error("cannot address the upstream");
    };
    await expect(openMeteredCall(services, metered({ build }))).rejects.toThrow("cannot address the upstream");
    expectReleasedOnce();
  });

  it("no upstream answers on any key: 502 provider_error, released once", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(openMeteredCall(services, metered({ baseUrl: `http://127.0.0.1:${port}` }))).rejects.toMatchObject({ type: "provider_error", status: 502 });
    expectReleasedOnce();
  });

  it("the upstream answers 5xx: its scrubbed error is thrown, released once, the other key not tried", async () => {
    handler = (_req, res) => answer(res, 503, { error: { message: `overloaded, key ${KEYS[0]} and ${KEYS[1]}` } });
    const failure = await openMeteredCall(services, metered()).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).type).toBe("provider_error");
    expect((failure as GatewayError).message).not.toMatch(/sk-metered/);
    expect(requests).toHaveLength(1);
    expectReleasedOnce();
  });

  it("every key answers 429: rate_limit_error with the upstream's Retry-After, released once", async () => {
    handler = (_req, res) => answer(res, 429, { error: { message: "slow down" } }, { "retry-after": "7" });
    await expect(openMeteredCall(services, metered())).rejects.toMatchObject({ type: "rate_limit_error", details: { headers: { "retry-after": "7" } } });
    expect(requests.map((r) => r.key).sort()).toEqual([...KEYS].sort());
    expectReleasedOnce();
  });

  it("the client aborts while the upstream has not answered: null, the upstream request cancelled, released once", async () => {
    const signal = new Cancellation();
    handler = () => signal.abort(); // never answers; the client leaves meanwhile
    expect(await openMeteredCall(services, metered({ signal }))).toBeNull();
    expect(await requests[0]!.closedEarly).toBe(true);
    expect(requests).toHaveLength(1);
    expectReleasedOnce();
  });

  it("the client aborts after a stream's head, before its first byte: null, released once", async () => {
    const signal = new Cancellation();
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      setTimeout(() => signal.abort(), 200); // after the head reached the gateway
    };
    expect(await openMeteredCall(services, metered({ signal, stream: true }))).toBeNull();
    expect(requests).toHaveLength(1);
    expectReleasedOnce();
  });
});

describe("MeteredCall after a 2xx answer", () => {
  it("fails over from a 429 to the next key and hands back the answer with its hold", async () => {
    handler = (_req, res) => (requests.length === 1 ? answer(res, 429, {}, { "retry-after": "30" }) : answer(res, 200, { ok: true }));
    const call = await openMeteredCall(services, metered());
    expect(call).toBeInstanceOf(MeteredCall);
    expect(call!.upstream.attempts).toBe(2);
    expect(call!.upstream.key).toBe(requests[1]!.key);
    expect(JSON.parse(await call!.upstream.response.body.text())).toEqual({ ok: true });
    expect((await call!.settle(USAGE)).cost).toBe(500n);
    await call!.release(); // after settling: nothing more
    expect(billing.settled).toEqual(["hold_1"]);
    expect(billing.released).toEqual([]);
  });

  it("a failure after the answer (reading it, storing a task) releases once however often release() is called", async () => {
    const call = await openMeteredCall(services, metered());
    await call!.upstream.response.body.dump();
    await Promise.all([call!.release(), call!.release()]);
    await call!.release();
    expect(() => call!.settle(USAGE)).toThrow(/after the metered call ended/);
    expectReleasedOnce();
  });
});

describe("openMeteredCall with clamping", () => {
  /** A refusal whose headroom leaves `tokens` tokens under the key's token cap (money unlimited but the balance). */
  const refusedWithRoom = (tokens: number | null) => {
    const headroom: Headroom | null =
      tokens === null
        ? null
        : {
            balance: 1_000_000_000n,
            monthCost: null,
            monthTokens: null,
            keyCost: null,
            keyTokens: BigInt(tokens),
            periodCost: null,
            periodTokens: null,
            budgetCost: null,
            budgetTokens: null,
          };
    return new LimitRefusal(new GatewayError("key_token_cap_exceeded"), headroom);
  };
  const clamped = (minOutputTokens: number, limited: number[]) => ({
    minOutputTokens,
    limitOutput: async (outputTokens: number) => {
      limited.push(outputTokens);
      return { build: metered().build };
    },
  });

  it("admits again with the output the headroom covers, forwards the lowered request and caps the charge at the hold", async () => {
    billing.refusals = [refusedWithRoom(60)];
    const limited: number[] = [];
    const call = await openMeteredCall(services, { ...metered(), clamp: clamped(10, limited) });
    // Prompt 5 + output 55 = the 60 tokens left.
    expect(billing.projections).toEqual([100, 55]);
    expect(limited).toEqual([55]);
    expect(call!.clampedOutputTokens).toBe(55);
    expect(call!.hold.chargeCap).toBe(call!.hold.amount);
    expect(requests).toHaveLength(1);
    await call!.release();
  });

  it("a concurrent request took the room: tries again with the smaller headroom, at most MAX_ADMISSION_ATTEMPTS admissions in all", async () => {
    billing.refusals = [refusedWithRoom(60), refusedWithRoom(40)];
    const limited: number[] = [];
    const call = await openMeteredCall(services, { ...metered(), clamp: clamped(10, limited) });
    expect(billing.projections).toEqual([100, 55, 35]);
    expect(limited).toEqual([35]);
    await call!.release();

    billing.projections = [];
    billing.refusals = Array.from({ length: MAX_ADMISSION_ATTEMPTS + 2 }, (_, i) => refusedWithRoom(90 - i * 10));
    const last = await openMeteredCall(services, { ...metered(), clamp: clamped(10, limited) }).catch((error: unknown) => error);
    expect(last).toBeInstanceOf(LimitRefusal);
    expect(billing.projections).toHaveLength(MAX_ADMISSION_ATTEMPTS);
    expect(limited).toEqual([35]);
  });

  it("refuses as before below the minimum, with clamping off (no headroom) and on routes without clamping", async () => {
    const limited: number[] = [];
    billing.refusals = [refusedWithRoom(5 + 9)];
    await expect(openMeteredCall(services, { ...metered(), clamp: clamped(10, limited) })).rejects.toMatchObject({ type: "key_token_cap_exceeded" });
    billing.refusals = [refusedWithRoom(null)];
    await expect(openMeteredCall(services, { ...metered(), clamp: clamped(10, limited) })).rejects.toMatchObject({ type: "key_token_cap_exceeded" });
    billing.refusals = [refusedWithRoom(60)];
    await expect(openMeteredCall(services, metered())).rejects.toMatchObject({ type: "key_token_cap_exceeded" });
    expect(billing.projections).toEqual([100, 100, 100]);
    expect(limited).toEqual([]);
    expect(requests).toHaveLength(0);
  });

  it("building the lowered request fails: the clamped hold is released once", async () => {
    billing.refusals = [refusedWithRoom(60)];
    const clamp = {
      minOutputTokens: 10,
      limitOutput: async () => {
        throw new Error("cannot plan");
      },
    };
    await expect(openMeteredCall(services, { ...metered(), clamp })).rejects.toThrow("cannot plan");
    expectReleasedOnce();
  });
});
