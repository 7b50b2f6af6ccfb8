// The Upstreams page's per-key last error and 429 cooldown: a key that answers 503 shows "HTTP 503";
// one that answers 429 with Retry-After shows "HTTP 429 (rate limited)" and the seconds left of its
// cooldown; a healthy key shows neither. Written with the breaker window, read back from the database.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyFingerprint } from "../../src/upstreams/upstream-health.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { signedInAccount, type DashboardClient } from "./support.js";

const FAILING = "sk-mock-key-failing-aaaaaaa";
const LIMITED = "sk-mock-key-limited-bbbbbbb";
const HEALTHY = "sk-mock-key-healthy-ccccccc";

describe.each(DATABASE_KINDS)("upstream keys' last errors and cooldowns on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let admin: { client: DashboardClient };

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = (req, res) => {
      if (req.key === FAILING) return json(res, 503, { error: { message: "overloaded" } });
      if (req.key === LIMITED) {
        res.setHeader("retry-after", "30");
        return json(res, 429, { error: { message: "slow down" } });
      }
      return json(res, 200, chatCompletion("ok"));
    };
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url, openaiKeys: [FAILING, LIMITED, HEALTHY] }), { kind });
    admin = await signedInAccount(gateway, { admin: true });
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("shows each key's last error and the seconds left of its 429 cooldown", async () => {
    const { raw } = await gateway.createAccount({ balance: "10" });
    // Rotation starts each request at the next key: three requests try every key first once (a 503
    // is the answer, 502 provider_error to the client; a 429 moves on to the next key).
    for (let i = 0; i < 3; i++) {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] }),
      });
      expect([200, 502]).toContain(response.status);
    }
    await gateway.app.ctx.pipeline.health.writeWindows();
    const keys = (await admin.client.get("/admin/upstreams")).body.keys as Array<{
      fingerprint: string;
      last_error: string | null;
      last_error_at: string | null;
      rate_limit_cooldown_seconds: number;
    }>;
    const of = (key: string) => keys.find((k) => k.fingerprint === keyFingerprint("mockai", key))!;
    expect(of(FAILING)).toMatchObject({ last_error: "HTTP 503", rate_limit_cooldown_seconds: 0 });
    expect(Date.parse(of(FAILING).last_error_at!)).toBeGreaterThan(Date.now() - 60_000);
    expect(of(LIMITED).last_error).toBe("HTTP 429 (rate limited)");
    expect(of(LIMITED).rate_limit_cooldown_seconds).toBeGreaterThan(25);
    expect(of(LIMITED).rate_limit_cooldown_seconds).toBeLessThanOrEqual(30);
    expect(of(HEALTHY)).toMatchObject({ last_error: null, last_error_at: null, rate_limit_cooldown_seconds: 0 });
    // A later window without errors keeps the last error on record.
    await gateway.app.ctx.pipeline.health.writeWindows();
    expect(((await admin.client.get("/admin/upstreams")).body.keys as typeof keys).find((k) => k.fingerprint === keyFingerprint("mockai", FAILING))!.last_error).toBe("HTTP 503");
  });
});
