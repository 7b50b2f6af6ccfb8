// Live config reload (decision 0021) on each database: a price change and a new model swapped in
// under a bounded loopback load with no failed request, requests in flight finishing on the old
// config, the new price in the ledger for requests admitted after the reload; an invalid file or a
// restart-only change refused with the start-up message while the old config keeps serving; the
// audit row; breakers surviving; /readyz's version; `gateway admin config reload`.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/main.js";
import { ConfigError, loadConfig } from "../../src/config/load.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";

const MAIN_KEY = "sk-mock-openai-key-0001";
const FLAKY_KEY = "sk-flaky-key-00000001";
/** Every answer: 1,000 input and 1,000 output tokens; at $1/M in and $2/M out that is $0.003, at $3/M in $0.005. */
const USAGE = { prompt_tokens: 1000, completion_tokens: 1000, total_tokens: 2000 };
const OLD_COST = "0.003";
const NEW_COST = "0.005";
const NEW_MODEL_COST = "0.011"; // gpt-new: $5/M in, $6/M out

function configText(mockUrl: string, options: { inputPrice?: string; newModel?: boolean; server?: string } = {}): string {
  return `
providers:
  mockai:
    type: openai
    base_url: "${mockUrl}/v1"
    keys: ["${MAIN_KEY}"]
    apis: [chat]
  flaky:
    type: openai
    base_url: "${mockUrl}/v1"
    keys: ["${FLAKY_KEY}"]
    apis: [chat]
models:
  - id: gpt-mock
    kind: chat
    provider: mockai
    default_output_tokens: 1000
    pricing: { input_per_mtok: "${options.inputPrice ?? "1.00"}", output_per_mtok: "2.00" }
  - id: flaky-mock
    kind: chat
    provider: flaky
    default_output_tokens: 1000
    pricing: { input_per_mtok: "1.00", output_per_mtok: "2.00" }
${
  options.newModel
    ? `  - id: gpt-new
    kind: chat
    provider: mockai
    default_output_tokens: 1000
    pricing: { input_per_mtok: "5.00", output_per_mtok: "6.00" }`
    : ""
}
tiers:
  standard: { models: ["*"] }
upstream_health: { window_ms: 30000, min_requests: 2, failure_threshold: 0.5, open_ms: 60000, half_open_trials: 1 }
${options.server ?? ""}
`;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Sent {
  model: string;
  afterReload: boolean;
  status: number;
  cost: string | null;
  requestId: string | null;
  error?: string;
}

for (const kind of DATABASE_KINDS) {
  describe(`config reload (${kind})`, () => {
    let mock: MockUpstream;
    let gateway: TestGateway;
    let apiKey: string;
    let adminToken: string;
    /** Released by the test: the upstream holds any request whose prompt is "hold" until then. */
    let releaseHeld: () => void = () => undefined;

    beforeAll(async () => {
      mock = await startMockUpstream();
      gateway = await startGateway(configText(mock.url), { kind });
      apiKey = (await gateway.createAccount({ balance: "1000", tier: "standard" })).raw;
      adminToken = (await gateway.app.ctx.store.adminTokens.create({ name: "reload", scopes: ["config:write", "audit:read"] })).raw;
    });
    afterAll(async () => {
      releaseHeld();
      await gateway?.close();
      await mock?.close();
    });
    beforeEach(() => {
      writeFileSync(gateway.configPath, configText(mock.url));
      mock.handler = async (req, res) => {
        if (req.key === FLAKY_KEY) return json(res, 500, { error: { message: "down" } });
        const prompt = (req.body as { messages?: Array<{ content?: unknown }> }).messages?.[0]?.content;
        if (prompt === "hold") await new Promise<void>((resolve) => (releaseHeld = resolve));
        else await sleep(2 + Math.floor(Math.random() * 8)); // some requests are in flight at any moment
        json(res, 200, chatCompletion("ok", { usage: USAGE }));
      };
    });

    async function chat(model: string, prompt = "Hi"): Promise<Omit<Sent, "afterReload">> {
      try {
        const response = await fetch(`${gateway.url}/v1/chat/completions`, {
          method: "POST",
          headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
          body: JSON.stringify({ model, messages: [{ role: "user", content: prompt }], max_tokens: 100 }),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await response.text();
        return {
          model,
          status: response.status,
          cost: response.headers.get("x-gateway-cost-usd"),
          requestId: response.headers.get("x-request-id"),
          ...(response.status !== 200 && { error: text.slice(0, 300) }),
        };
      } catch (error) {
        return { model, status: 0, cost: null, requestId: null, error: String(error) };
      }
    }

    async function reload(): Promise<{ status: number; body: any }> {
      const response = await fetch(`${gateway.url}/admin/v1/config/reload`, {
        method: "POST",
        headers: { authorization: `Bearer ${adminToken}`, "content-type": "application/json" },
        body: "{}",
        signal: AbortSignal.timeout(15_000),
      });
      return { status: response.status, body: await response.json() };
    }

    async function readyz(): Promise<{ version: string; loaded_at: string }> {
      const response = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(5000) });
      expect(response.status).toBe(200);
      return ((await response.json()) as { config: { version: string; loaded_at: string } }).config;
    }

    async function ledgerCosts(requestIds: string[]): Promise<Map<string, { cost: bigint; model: string | null }>> {
      const rows = await gateway.app.ctx.store.db
        .selectFrom("ledger")
        .select(["request_id", "cost_nano", "model"])
        .where("request_id", "in", requestIds)
        .where("kind", "=", "usage")
        .execute();
      return new Map(rows.map((r) => [r.request_id, { cost: BigInt(r.cost_nano), model: r.model }]));
    }

    it("swaps a price change and a new model in under load: no request fails, later requests pay the new price", async () => {
      const before = await readyz();
      expect(before.version).toBe(sha256(readFileSync(gateway.configPath, "utf8")));

      // Admitted before the reload and still at the upstream when it happens: finishes on the old config.
      const held = chat("gpt-mock", "hold");
      const heldDeadline = Date.now() + 5000;
      while (!mock.requests.some((r) => (r.body as { messages?: Array<{ content?: unknown }> }).messages?.[0]?.content === "hold")) {
        if (Date.now() > heldDeadline) throw new Error("the held request never reached the upstream");
        await sleep(5);
      }

      // Bounded load on loopback: 6 clients, 150 requests at most, 30 s at most.
      const TOTAL = 150;
      const CLIENTS = 6;
      const loadDeadline = Date.now() + 30_000;
      const sent: Sent[] = [];
      let issued = 0;
      let reloaded = false;
      const client = async (n: number) => {
        while (issued < TOTAL && Date.now() < loadDeadline) {
          issued += 1;
          const afterReload = reloaded;
          // After the reload every other client also asks for the model the reload added.
          const model = afterReload && n % 2 === 1 ? "gpt-new" : "gpt-mock";
          sent.push({ ...(await chat(model)), afterReload });
        }
      };
      const clients = Array.from({ length: CLIENTS }, (_, n) => client(n));

      while (sent.length < 40 && Date.now() < loadDeadline) await sleep(5);
      writeFileSync(gateway.configPath, configText(mock.url, { inputPrice: "3.00", newModel: true }));
      const answer = await reload();
      reloaded = true;
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({
        object: "config.reload",
        status: "reloaded",
        version: sha256(readFileSync(gateway.configPath, "utf8")),
        previous_version: before.version,
        changes: { models_added: ["gpt-new"], models_removed: [], models_changed: ["gpt-mock"], providers_added: [], providers_removed: [], providers_changed: [] },
      });
      await Promise.all(clients);
      releaseHeld();
      const heldResult = await held;

      const failed = sent.filter((s) => s.status !== 200);
      expect(failed, JSON.stringify(failed.slice(0, 3))).toEqual([]);
      expect(sent).toHaveLength(TOTAL);
      const after = sent.filter((s) => s.afterReload);
      expect(after.length).toBeGreaterThanOrEqual(30);
      expect(after.filter((s) => s.model === "gpt-new").length).toBeGreaterThanOrEqual(10);
      for (const s of after) expect(s.cost, `${s.model} ${s.requestId}`).toBe(s.model === "gpt-new" ? NEW_MODEL_COST : NEW_COST);
      // Sent before the reload: one price or the other, never a mix (a request's cost is one config's).
      for (const s of sent.filter((x) => !x.afterReload)) expect([OLD_COST, NEW_COST]).toContain(s.cost);
      expect(sent.filter((x) => !x.afterReload && x.cost === OLD_COST).length).toBeGreaterThanOrEqual(40);
      expect(heldResult.status).toBe(200);
      expect(heldResult.cost).toBe(OLD_COST);

      // The ledger agrees: the new price for every request admitted after the reload, the old one for the held request.
      const ledger = await ledgerCosts([...after.map((s) => s.requestId!), heldResult.requestId!]);
      for (const s of after) {
        expect(ledger.get(s.requestId!), s.requestId!).toEqual({ cost: s.model === "gpt-new" ? 11_000_000n : 5_000_000n, model: s.model });
      }
      expect(ledger.get(heldResult.requestId!)).toEqual({ cost: 3_000_000n, model: "gpt-mock" });

      const now = await readyz();
      expect(now.version).toBe(answer.body.version);
      expect(Date.parse(now.loaded_at)).toBeGreaterThanOrEqual(Date.parse(before.loaded_at));

      // The reload is in the audit log, with the admin token as its actor.
      const audit = await fetch(`${gateway.url}/admin/v1/audit?target_type=config`, { headers: { authorization: `Bearer ${adminToken}` } });
      const rows = ((await audit.json()) as { data: Array<Record<string, any>> }).data;
      expect(rows[0]).toMatchObject({
        action: "config.reload",
        target: { type: "config", id: gateway.configPath },
        actor: { type: "admin_token", name: "reload" },
        before: { version: before.version },
        after: { version: answer.body.version, models_added: ["gpt-new"], models_changed: ["gpt-mock"] },
      });
    }, 60_000);

    it("refuses an invalid file with the start-up message; the old config keeps serving", async () => {
      expect((await reload()).body.status).toMatch(/reloaded|unchanged/); // back to the base config
      const serving = await readyz();
      const invalid = [
        configText(mock.url, { inputPrice: "-1" }),
        "models: [\n  - id: x\n    kind: [unclosed\n",
        configText(mock.url).replace("kind: chat", "kind: sound"),
        configText(mock.url).replace(`keys: ["${MAIN_KEY}"]`, 'keys: ["${RELOAD_TEST_UNSET_VARIABLE}"]'),
      ];
      for (const text of invalid) {
        writeFileSync(gateway.configPath, text);
        // What `gateway serve` would print for this file at start-up.
        let startupMessage = "";
        try {
          loadConfig({ ...gateway.database.env, GATEWAY_CONFIG: gateway.configPath }, dirname(gateway.configPath));
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          startupMessage = error.message;
        }
        expect(startupMessage).toContain(gateway.configPath);
        const refused = await reload();
        expect(refused.status).toBe(422);
        expect(refused.body.error).toMatchObject({ type: "config_reload_refused", message: startupMessage });
        expect(refused.body.request_id).toMatch(/^req_/);
        expect(gateway.logs.some((l) => l.msg === "config reload refused; the running config stays" && l.reason === startupMessage)).toBe(true);
        const ok = await chat("gpt-mock");
        expect(ok).toMatchObject({ status: 200, cost: OLD_COST });
        expect(await readyz()).toEqual(serving);
      }
      expect((await chat("gpt-new")).status).toBe(404);
    });

    it("refuses a change only a restart applies, naming the setting; the same file again is unchanged", async () => {
      const serving = await readyz();
      writeFileSync(gateway.configPath, configText(mock.url, { inputPrice: "3.00", server: "server: { body_limit_mb: 2 }" }));
      const refused = await reload();
      expect(refused.status).toBe(422);
      expect(refused.body.error.message).toBe(`${gateway.configPath}: server.body_limit_mb: changed; needs a restart (a reload cannot change it)`);
      expect(await chat("gpt-mock")).toMatchObject({ status: 200, cost: OLD_COST });
      writeFileSync(gateway.configPath, configText(mock.url).replace("open_ms: 60000", "open_ms: 1000"));
      expect((await reload()).body.error.message).toBe(`${gateway.configPath}: upstream_health: changed; needs a restart (a reload cannot change it)`);
      writeFileSync(gateway.configPath, configText(mock.url));
      const again = await reload();
      expect(again.body).toMatchObject({ status: "unchanged", version: serving.version, loaded_at: serving.loaded_at });
      expect(await readyz()).toEqual(serving);
    });

    it("keeps breakers and key cooldowns of providers that still exist across a reload", async () => {
      const { health, rotation } = gateway.app.ctx.pipeline;
      const scope = health.scopeOfKey("flaky", FLAKY_KEY);
      for (let i = 0; i < 2; i++) expect((await chat("flaky-mock")).status).not.toBe(200);
      expect(health.isOpen(scope)).toBe(true);
      const reachedFlaky = mock.requests.filter((r) => r.key === FLAKY_KEY).length;

      writeFileSync(gateway.configPath, configText(mock.url, { inputPrice: "3.00" }));
      expect((await reload()).body.status).toBe("reloaded");
      expect(gateway.app.ctx.pipeline.health).toBe(health);
      expect(gateway.app.ctx.pipeline.rotation).toBe(rotation);
      expect(health.isOpen(scope)).toBe(true);
      // Refused at the open breaker, without a request to the upstream; the reloaded price applies elsewhere.
      expect((await chat("flaky-mock")).status).not.toBe(200);
      expect(mock.requests.filter((r) => r.key === FLAKY_KEY)).toHaveLength(reachedFlaky);
      expect(await chat("gpt-mock")).toMatchObject({ status: 200, cost: NEW_COST });
    });

    it("gateway admin config reload reaches the running gateway and prints a refusal's precise message", async () => {
      const run = async (env: Record<string, string>) => {
        let stdout = "";
        let stderr = "";
        const code = await runCli(["admin", "config", "reload"], {
          stdout: (t) => (stdout += t),
          stderr: (t) => (stderr += t),
          // No GATEWAY_CONFIG, no database: the CLI needs neither for a reload.
          env: { GATEWAY_URL: gateway.url, ...env },
          cwd: dirname(gateway.configPath),
        });
        return { code, stdout, stderr };
      };
      writeFileSync(gateway.configPath, configText(mock.url, { inputPrice: "3.00", newModel: true }));
      const ok = await run({ GATEWAY_ADMIN_TOKEN: adminToken });
      expect(ok.stderr).toBe("");
      expect(ok.code).toBe(0);
      expect(ok.stdout).toMatch(/^config (reloaded: version [0-9a-f]{64}|unchanged)/);
      expect((await chat("gpt-new")).status).toBe(200);

      writeFileSync(gateway.configPath, configText(mock.url, { inputPrice: "abc" }));
      const refused = await run({ GATEWAY_ADMIN_TOKEN: adminToken });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        `gateway: config_reload_refused: ${gateway.configPath}: models[0].pricing.input_per_mtok: "abc" is not a non-negative USD amount with at most 9 decimals\n`,
      );
      expect((await chat("gpt-new")).status).toBe(200);

      const noToken = await run({});
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toContain("GATEWAY_ADMIN_TOKEN");
      const weak = (await gateway.app.ctx.store.adminTokens.create({ name: "weak", scopes: ["audit:read"] })).raw;
      const forbidden = await run({ GATEWAY_ADMIN_TOKEN: weak });
      expect(forbidden.code).toBe(1);
      expect(forbidden.stderr).toBe("gateway: forbidden: This admin token lacks the scope config:write.\n");
      const unreachable = await run({ GATEWAY_ADMIN_TOKEN: adminToken, GATEWAY_URL: "http://127.0.0.1:9" });
      expect(unreachable.code).toBe(1);
      expect(unreachable.stderr).toMatch(/^gateway: cannot reach the gateway at http:\/\/127\.0\.0\.1:9: /);
      const badUrl = await run({ GATEWAY_ADMIN_TOKEN: adminToken, GATEWAY_URL: "localhost:8080" });
      expect(badUrl.code).toBe(2);
      expect(badUrl.stderr).toBe('gateway: GATEWAY_URL: "localhost:8080" is not an http(s) URL such as http://127.0.0.1:8080\n');
    });
  });
}
