// Rate and concurrency limits are exact across TWO gateway processes sharing one database (SQLite file
// or PostgreSQL): 200 requests as fast as possible against an rpm limit of 60 and against a tpm limit,
// and a concurrency limit of 5 with slow upstream streams (counted at the mock) whose slot frees when
// a stream ends and when its client disconnects.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { killAll, startGateway as spawnGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, chatStream, json, startMockUpstream } from "../support/mock-upstream.js";

afterAll(() => killAll());

const REQUESTS = 200;

function chat(gateway: GatewayProcess, raw: string, extra: object = {}, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gateway.baseUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 100, ...extra }),
    ...(signal && { signal }),
  });
}

for (const kind of DATABASE_KINDS) {
  describe(`traffic limits across two gateway processes on ${kind}`, () => {
    it("rpm, tpm and concurrency limits are exact across both processes", { timeout: 180_000 }, async () => {
      const mock = await startMockUpstream();
      let usage = { prompt_tokens: 4, completion_tokens: 50, total_tokens: 54 };
      // Streams wait for the test to let them end; the mock counts what is in flight at once.
      let inFlight = 0;
      let maxInFlight = 0;
      const gates: Array<() => void> = [];
      mock.handler = async (req, res) => {
        if (!req.body?.stream) return json(res, 200, chatCompletion("ok", { usage }));
        inFlight += 1;
        maxInFlight = Math.max(maxInFlight, inFlight);
        res.on("close", () => (inFlight -= 1));
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(
          `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { role: "assistant", content: "…" }, finish_reason: null }] })}\n\n`,
        );
        await new Promise<void>((resolve) => gates.push(resolve));
        if (res.destroyed) return;
        await chatStream(req, res, ["done"]);
      };
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), "gw-limits-"));
      const configPath = join(dir, "gateway.config.yaml");
      writeFileSync(configPath, mockConfig({ openaiUrl: mock.url }));
      const env = { ...database.env, GATEWAY_CONFIG: configPath, LOG_LEVEL: "warn" };
      const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      const account = await store.accounts.create({ email: `limits-${kind}@example.com`, tier: "standard", balance: 100_000_000_000n });
      const rpmKey = await store.keys.create({ accountId: account.id, limits: { requests_per_minute: 60 } });
      const probeKey = await store.keys.create({ accountId: account.id, limits: { tokens_per_minute: 1_000_000 } });
      const tpmKey = await store.keys.create({ accountId: account.id });
      const slotKey = await store.keys.create({ accountId: account.id, limits: { concurrent_requests: 5 } });
      try {
        const gateways = await Promise.all([spawnGateway(dir, env), spawnGateway(dir, env)]);
        await Promise.all(gateways.map((g) => waitUntilHealthy(g)));

        // rpm 60: 200 requests at once across both processes; exactly 60 admitted.
        const rpm = await Promise.all(
          Array.from({ length: REQUESTS }, async (_, i) => {
            const response = await chat(gateways[i % 2]!, rpmKey.raw);
            const body = (await response.json()) as { error?: { type: string; code: string } };
            return {
              status: response.status,
              code: body.error?.code,
              remaining: response.headers.get("x-ratelimit-remaining-requests"),
              retryAfter: response.headers.get("retry-after"),
            };
          }),
        );
        expect(rpm.filter((r) => r.status === 200)).toHaveLength(60);
        expect(rpm.filter((r) => r.status === 429)).toHaveLength(140);
        expect(rpm.filter((r) => r.status === 429).every((r) => r.code === "key_rpm_exceeded" && Number(r.retryAfter) >= 1 && Number(r.retryAfter) <= 60)).toBe(true);
        // Each admitted request saw one fewer remaining: 59 down to 0, each once.
        expect(
          rpm
            .filter((r) => r.status === 200)
            .map((r) => Number(r.remaining))
            .sort((a, b) => a - b),
        ).toEqual(Array.from({ length: 60 }, (_, i) => i));
        expect(await store.db.selectFrom("ledger").select("id").where("key_id", "=", rpmKey.key.id).where("kind", "=", "usage").execute()).toHaveLength(60);

        // tpm: one request tells the projection P (limit - remaining); the key then gets a limit of
        // 60.5 P (before it is first used, so no process has it cached), and the mock reports exactly
        // P tokens used, so settlements correct nothing and exactly 60 fit.
        const first = await chat(gateways[0], probeKey.raw);
        expect(first.status).toBe(200);
        await first.json();
        const projected = 1_000_000 - Number(first.headers.get("x-ratelimit-remaining-tokens"));
        expect(projected).toBeGreaterThan(100);
        await store.keys.setLimits(tpmKey.key.id, { tokens_per_minute: 60 * projected + Math.floor(projected / 2) });
        usage = { prompt_tokens: projected - 100, completion_tokens: 100, total_tokens: projected };
        const tpm = await Promise.all(
          Array.from({ length: REQUESTS }, async (_, i) => {
            const response = await chat(gateways[i % 2]!, tpmKey.raw);
            const body = (await response.json()) as { error?: { code: string } };
            return { status: response.status, code: body.error?.code };
          }),
        );
        expect(tpm.filter((r) => r.status === 200)).toHaveLength(60);
        expect(tpm.filter((r) => r.status !== 200).every((r) => r.status === 429 && r.code === "key_tpm_exceeded")).toBe(true);

        // Concurrency 5 with slow streams: 5 in flight at the mock, the 6th refused at once.
        // One after another, each at the mock before the next starts, so that gates[i] holds heads[i]'s
        // stream (released below by index); in parallel their order at the mock varies under load.
        const heads: Response[] = [];
        for (let i = 0; i < 5; i++) {
          heads.push(await chat(gateways[i % 2]!, slotKey.raw, { stream: true }));
          await waitFor(
            () => inFlight === i + 1,
            10_000,
            () => `in flight at the mock: ${inFlight}, expected ${i + 1}`,
          );
        }
        expect(heads.every((r) => r.status === 200)).toBe(true);
        const started = Date.now();
        const sixth = await chat(gateways[1], slotKey.raw, { stream: true });
        expect(Date.now() - started).toBeLessThan(2000);
        expect(sixth.status).toBe(429);
        expect(sixth.headers.get("retry-after")).toBe("1");
        expect(((await sixth.json()) as { error: { code: string } }).error.code).toBe("key_concurrency_exceeded");

        // A stream that ends frees its slot.
        gates.shift()!();
        await heads[0]!.text();
        await waitFor(
          async () => {
            const response = await chat(gateways[0], slotKey.raw, { stream: true });
            const ok = response.status === 200;
            if (!ok) await response.text();
            return ok;
          },
          10_000,
          () => "no slot after a stream ended",
        );
        // A client that disconnects frees its slot: cancel one reader, then a new stream is admitted.
        await heads[1]!.body!.cancel();
        // The gateway aborts the upstream request before it frees the slot, but on a loaded host the
        // mock can read a new request before the aborted connection's close: wait for that close, so
        // that the count at the mock is the gateway's admissions and not the network's ordering.
        await waitFor(
          () => inFlight === 4,
          10_000,
          () => `in flight at the mock after a client disconnected: ${inFlight}, expected 4`,
        );
        await waitFor(
          async () => {
            const response = await chat(gateways[1], slotKey.raw, { stream: true });
            const ok = response.status === 200;
            if (!ok) await response.text();
            return ok;
          },
          10_000,
          () => "no slot after a client disconnected",
        );
        expect(maxInFlight).toBeLessThanOrEqual(5);
        // Let every stream end: every hold ends, every slot is free.
        while (gates.length > 0) gates.shift()!();
        await waitFor(
          async () => {
            const rows = await store.db.selectFrom("traffic_windows").select(["scope", "in_flight"]).where("scope", "=", `key:${slotKey.key.id}`).execute();
            return rows[0]?.in_flight === 0n;
          },
          10_000,
          () => "slots still taken after every stream ended",
        );
        expect(maxInFlight).toBeLessThanOrEqual(5);
      } finally {
        while (gates.length > 0) gates.shift()!();
        killAll();
        await store.close();
        await mock.close();
        await database.drop();
      }
    });
  });
}
