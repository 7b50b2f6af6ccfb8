// The OpenAPI 3.1 description (GET /openapi.json) end to end on both databases: the official
// validator (@readme/openapi-parser) accepts the served document; every route the server registers
// under /v1, /admin/v1 and /dashboard/api has its operation (and every operation its route); and
// real answers of every route family, driven with the official OpenAI and Anthropic SDKs where they
// fit and fetch elsewhere, match their operation's status and response schema (ajv, draft 2020-12).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { validate as validateOpenApi } from "@readme/openapi-parser";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import Fastify from "fastify";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTES } from "../../src/app.js";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { runCli } from "../../src/cli/main.js";
import { CATALOG_ENTITY_ROUTES } from "../../src/admin/routes/catalog-entities.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { startGateway, type TestGateway } from "../support/gateway.js";
import { checkoutCompleted, disputeCreated, startMockStripe, stripeConfigSection, type MockStripe } from "../support/mock-stripe.js";
import Stripe from "stripe";
import { anthropicMessage, chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { DashboardClient, signedInAccount } from "../dashboard/support.js";
import { openaiVideos, pollUntilDone } from "../media/support.js";

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type OpenApiDocument = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>> };

interface Recorded {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: unknown;
}

/** The families the document must cover completely. */
const FAMILIES = ["/v1/", "/v1beta/", "/admin/v1/", "/dashboard/api/"];

function config(mockUrl: string): string {
  return `
providers:
  mockai:
    type: openai
    base_url: "${mockUrl}/v1"
    keys: ["sk-mock-openai-key-0001"]
    apis: [chat, images, videos]
  mockanthropic:
    type: anthropic
    base_url: "${mockUrl}"
    keys: ["sk-ant-mock-key-0001"]
models:
  - id: gpt-mock
    kind: chat
    provider: mockai
    upstream_model: upstream-gpt
    max_output_tokens: 4096
    pricing: { input_per_mtok: "1.00", cached_input_per_mtok: "0.50", output_per_mtok: "2.00" }
  - id: claude-mock
    kind: chat
    provider: mockanthropic
    upstream_model: claude-upstream
    max_output_tokens: 8192
    pricing: { input_per_mtok: "3.00", output_per_mtok: "15.00" }
  - id: embed-mock
    kind: embedding
    provider: mockai
    pricing: { input_per_mtok: "0.13" }
  - id: image-mock
    kind: image
    provider: mockai
    pricing: { per_image: { default: "0.04" } }
  - id: sora-mock
    kind: video
    provider: mockai
    upstream_model: sora-2
    pricing: { per_video_second: "0.10" }
tiers:
  standard: { models: ["*"] }
server:
  default_tier: standard
  signup: open
metrics:
  token_env: GW_TEST_OPENAPI_METRICS_TOKEN
`;
}

const METRICS_TOKEN = "openapi-metrics-token";

/** `/v1/models/{id}` as a regex over real paths. */
function pathPattern(template: string): RegExp {
  const escaped = template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "([^/]+)");
  return new RegExp(`^${escaped.replace(/\(\[\^\/\]\+\)$/, "(.+)")}$`);
}

/** Fastify's `/accounts/:id` and `*` in the document's `{id}` form, for comparing routes and paths. */
function normalised(path: string): string {
  return path
    .replace(/:[A-Za-z_]+/g, "{}")
    .replace(/\{[^}]+\}/g, "{}")
    .replace(/\*$/, "{}");
}

/** Every registered route of the three families (HEAD excluded: Fastify adds one per GET) without an operation. */
function routesWithoutOperation(routes: Array<{ method: string; url: string }>, document: OpenApiDocument): string[] {
  const documented = new Set(Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${normalised(path)}`)));
  return routes
    .filter((route) => route.method !== "HEAD" && FAMILIES.some((prefix) => route.url.startsWith(prefix)))
    .map((route) => `${route.method} ${normalised(route.url)}`)
    .filter((route) => !documented.has(route));
}

describe.each(DATABASE_KINDS)("OpenAPI description on %s", (kind) => {
  let mock: MockUpstream;
  let mockStripe: MockStripe;
  const STRIPE_SECRET = "whsec_openapi_0001";
  let gateway: TestGateway;
  let configDir: string;
  let document: OpenApiDocument;
  const recorded: Recorded[] = [];

  /** fetch that records every answer (the SDKs get it too), for the schema check at the end. */
  const recordingFetch: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    // The SDKs also fetch a data: URL of their own (a feature probe); only the gateway's answers count.
    if (url.origin !== new URL(gateway.url).origin) return response;
    const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
    const contentType = response.headers.get("content-type") ?? "";
    const copy = response.clone();
    const text = contentType.startsWith("application/json") ? await copy.text() : null;
    recorded.push({ method, path: url.pathname, status: response.status, contentType, body: text === null || text === "" ? null : JSON.parse(text) });
    return response;
  };

  async function call(method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.body !== undefined) headers["content-type"] = "application/json";
    const response = await recordingFetch(`${gateway.url}${path}`, { method, headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
    const text = await response.text();
    return { status: response.status, body: text && (response.headers.get("content-type") ?? "").includes("json") ? JSON.parse(text) : text };
  }

  /** A dashboard client whose requests are recorded too. */
  function recordDashboard(client: DashboardClient): DashboardClient {
    const original = client.request.bind(client);
    client.request = async (method, path, body, options) => {
      const response = await original(method, path, body, options);
      recorded.push({
        method,
        path: path.split("?")[0]!,
        status: response.status,
        contentType: response.headers.get("content-type") ?? "",
        body: (response.headers.get("content-type") ?? "").startsWith("application/json") ? response.body : null,
      });
      return response;
    };
    return client;
  }

  async function cli(argv: string[]): Promise<any> {
    let stdout = "";
    let stderr = "";
    const code = await runCli([...argv, "--json"], {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      env: { ...gateway.database.env, GW_TEST_OPENAPI_METRICS_TOKEN: METRICS_TOKEN, GATEWAY_CONFIG: join(configDir, "gateway.config.yaml") },
      cwd: configDir,
    });
    if (code !== 0) throw new Error(`gateway ${argv.join(" ")} exited ${code}: ${stderr}`);
    return JSON.parse(stdout);
  }

  beforeAll(async () => {
    mock = await startMockUpstream();
    mockStripe = await startMockStripe();
    const yaml = config(mock.url) + stripeConfigSection(mockStripe.url, STRIPE_SECRET);
    gateway = await startGateway(yaml, { kind, env: { GW_TEST_OPENAPI_METRICS_TOKEN: METRICS_TOKEN } });
    // The first GET builds the document; every test below reads this copy.
    document = (await (await recordingFetch(`${gateway.url}/openapi.json`)).json()) as OpenApiDocument;
    configDir = mkdtempSync(join(tmpdir(), "gw-openapi-"));
    writeFileSync(join(configDir, "gateway.config.yaml"), yaml);
    openaiVideos(
      mock,
      () => [{ status: "in_progress", progress: 50 }, { status: "completed" }],
      (req, res) => {
        const path = req.url.split("?")[0];
        if (path === "/v1/chat/completions") {
          if (req.body.stream) return void chatStream(req, res, ["Hel", "lo"]);
          return json(res, 200, chatCompletion("Hello", { model: "upstream-gpt" }));
        }
        if (path === "/v1/messages") return json(res, 200, anthropicMessage("Hello"));
        if (path === "/v1/messages/count_tokens") return json(res, 200, { input_tokens: 42 });
        if (path === "/v1/embeddings")
          return json(res, 200, { object: "list", data: [{ object: "embedding", index: 0, embedding: [0.5, -0.25] }], model: "e", usage: { prompt_tokens: 3, total_tokens: 3 } });
        if (path === "/v1/images/generations") return json(res, 200, { created: 1_760_000_000, data: [{ b64_json: "aGVsbG8=" }] });
        return json(res, 404, { error: { message: `no route ${path}` } });
      },
    );
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
    await mockStripe?.close();
    if (configDir) rmSync(configDir, { recursive: true, force: true });
  });

  it("serves a document the official OpenAPI validator accepts, built once and cached", async () => {
    const first = await fetch(`${gateway.url}/openapi.json`);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toMatch(/^application\/json/);
    const text = await first.text();
    expect(JSON.parse(text)).toEqual(document);
    expect(document.openapi).toMatch(/^3\.1\./);
    const result = await validateOpenApi(structuredClone(document) as never);
    expect(result.valid, JSON.stringify(result)).toBe(true);
    expect(await (await fetch(`${gateway.url}/openapi.json`)).text()).toBe(text);
    // A broken document is refused: the validator is really checking.
    const broken = structuredClone(document) as any;
    broken.paths["/v1/me"].get.responses = "none";
    expect((await validateOpenApi(broken)).valid).toBe(false);
  });

  it("has an operation for every registered /v1, /admin/v1 and /dashboard/api route, and a route for every operation", async () => {
    const app = Fastify();
    const routes: Array<{ method: string; url: string }> = [];
    app.addHook("onRoute", (route) => {
      for (const method of [route.method].flat()) routes.push({ method, url: route.url });
    });
    for (const register of ROUTES) register(app, gateway.app.ctx);
    await app.ready();
    await app.close();
    expect(routes.filter((r) => FAMILIES.some((prefix) => r.url.startsWith(prefix))).length).toBeGreaterThan(50);
    expect(routesWithoutOperation(routes, document)).toEqual([]);
    // The check fails for a route without an operation.
    expect(routesWithoutOperation([...routes, { method: "POST", url: "/v1/undocumented" }], document)).toEqual(["POST /v1/undocumented"]);
    const registered = new Set(routes.map((r) => `${r.method} ${normalised(r.url)}`));
    const orphans = Object.entries(document.paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${normalised(path)}`))
      .filter((operation) => !registered.has(operation));
    expect(orphans).toEqual([]);
  });

  it("drives every route family; each recorded answer matches its operation's status and schema", async () => {
    // ---- /dashboard/api (an administrator, then a second account for workspaces) ----
    const { account: me, client: dash } = await signedInAccount(gateway, { admin: true, balance: "50" });
    recordDashboard(dash);
    expect((await dash.get("/session")).status).toBe(200);
    expect((await dash.request("GET", "/dashboard/api/config")).status).toBe(200);
    // Company sign-in is not configured here (test/dashboard/company-sign-in.test.ts drives it): 404.
    expect((await dash.request("GET", "/dashboard/api/auth/oidc/start")).status).toBe(404);
    expect((await dash.request("GET", "/dashboard/api/auth/oidc/callback?code=c&state=s")).status).toBe(404);
    const createdKey = await dash.post("/keys", { name: "sdk", budget_cap_usd: "10.00", allowed_models: ["gpt-mock", "claude-mock", "embed-mock", "image-mock", "sora-mock"] });
    expect(createdKey.status, createdKey.text).toBe(201);
    const raw: string = createdKey.body.raw_key;
    const keyId: string = createdKey.body.key.id;
    expect((await dash.post(`/keys/${keyId}/show-again`, { token: createdKey.body.show_again.token })).status).toBe(200);

    // ---- /v1 with the official SDKs ----
    const openai = new OpenAI({ apiKey: raw, baseURL: `${gateway.url}/v1`, maxRetries: 0, fetch: recordingFetch });
    const anthropic = new Anthropic({ apiKey: raw, baseURL: gateway.url, maxRetries: 0, fetch: recordingFetch });
    const completion = await openai.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }] });
    expect(completion.choices[0]!.message.content).toBe("Hello");
    let streamed = "";
    for await (const chunk of await openai.chat.completions.create({ model: "gpt-mock", messages: [{ role: "user", content: "hi" }], stream: true })) {
      streamed += chunk.choices[0]?.delta.content ?? "";
    }
    expect(streamed).toBe("Hello");
    const response = await openai.responses.create({ model: "gpt-mock", input: "hi" });
    expect((await openai.responses.retrieve(response.id)).id).toBe(response.id);
    expect((await openai.models.list()).data.length).toBeGreaterThan(0);
    expect((await openai.models.retrieve("gpt-mock")).id).toBe("gpt-mock");
    await expect(openai.models.retrieve("no-such-model")).rejects.toMatchObject({ status: 404 });
    await expect(openai.chat.completions.create({ model: "gpt-mock", messages: [] })).rejects.toMatchObject({ status: 400 });
    expect((await openai.embeddings.create({ model: "embed-mock", input: "hi" })).data).toHaveLength(1);
    expect((await openai.images.generate({ model: "image-mock", prompt: "a kite" })).data).toHaveLength(1);
    const video = await openai.videos.create({ model: "sora-mock", prompt: "a kite", seconds: "8" });
    expect((await pollUntilDone(openai, video.id, "sora-mock")).status).toBe("completed");
    const content = await recordingFetch(`${gateway.url}/v1/videos/${video.id}/content`, { headers: { authorization: `Bearer ${raw}` } });
    expect(content.status).toBe(200);
    await content.arrayBuffer();

    const message = await anthropic.messages.create({ model: "claude-mock", max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
    expect(message.content[0]).toMatchObject({ type: "text", text: "Hello" });
    expect((await anthropic.messages.countTokens({ model: "claude-mock", messages: [{ role: "user", content: "hi" }] })).input_tokens).toBe(42);
    expect((await anthropic.models.list()).data.length).toBeGreaterThan(0);
    await expect(anthropic.messages.create({ model: "claude-mock", max_tokens: -1, messages: [] })).rejects.toMatchObject({ status: 400 });

    // ---- /mcp (no MCP servers configured: an empty server) ----
    const mcpHeaders = { authorization: `Bearer ${raw}`, accept: "application/json, text/event-stream" };
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "openapi-test", version: "1" } },
    };
    const opened = await recordingFetch(`${gateway.url}/mcp`, { method: "POST", headers: { ...mcpHeaders, "content-type": "application/json" }, body: JSON.stringify(initialize) });
    expect(opened.status).toBe(200);
    await opened.text();
    const mcpSession = opened.headers.get("mcp-session-id")!;
    expect((await call("GET", "/mcp", { headers: mcpHeaders })).status).toBe(400);
    expect((await call("DELETE", "/mcp", { headers: { ...mcpHeaders, "mcp-session-id": mcpSession } })).status).toBe(200);

    // ---- /v1beta with Google's Gen AI SDK ----
    const genai = new GoogleGenAI({ apiKey: raw, httpOptions: { baseUrl: gateway.url, fetch: recordingFetch } });
    expect((await genai.models.generateContent({ model: "gpt-mock", contents: "hi" })).text).toBe("Hello");
    let geminiStreamed = "";
    for await (const chunk of await genai.models.generateContentStream({ model: "gpt-mock", contents: "hi" })) geminiStreamed += chunk.text ?? "";
    expect(geminiStreamed).toBe("Hello");
    const jsonArrayStream = await call("POST", "/v1beta/models/gpt-mock:streamGenerateContent", {
      headers: { "x-goog-api-key": raw },
      body: { contents: [{ parts: [{ text: "hi" }] }] },
    });
    expect(jsonArrayStream.status).toBe(200);
    expect((await genai.models.countTokens({ model: "gpt-mock", contents: "hi" })).totalTokens).toBeGreaterThan(0);
    const geminiModels: string[] = [];
    for await (const model of await genai.models.list()) geminiModels.push(model.name ?? "");
    expect(geminiModels).toContain("models/gpt-mock");
    expect((await genai.models.get({ model: "gpt-mock" })).name).toBe("models/gpt-mock");
    await expect(genai.models.generateContent({ model: "gpt-mock", contents: "hi", config: { candidateCount: 2 } })).rejects.toMatchObject({ status: 400 });
    expect((await genai.models.embedContent({ model: "embed-mock", contents: "hi" })).embeddings).toHaveLength(1);
    const genaiV1 = new GoogleGenAI({ apiKey: raw, apiVersion: "v1", httpOptions: { baseUrl: gateway.url, fetch: recordingFetch } });
    expect((await genaiV1.models.generateContent({ model: "gpt-mock", contents: "hi" })).text).toBe("Hello");

    // ---- /v1 with fetch ----
    const bearer = { authorization: `Bearer ${raw}` };
    expect((await call("GET", "/v1/me", { headers: bearer })).status).toBe(200);
    expect((await call("GET", "/v1/usage?start=2020-01-01", { headers: bearer })).status).toBe(200);
    expect((await call("GET", "/v1/usage?start=yesterday", { headers: bearer })).status).toBe(400);
    const ledger = await dash.get("/ledger?limit=5");
    expect(ledger.status).toBe(200);
    const requestId: string = ledger.body.data[0].request_id;
    expect((await call("GET", `/v1/requests/${requestId}`, { headers: bearer })).status).toBe(200);
    expect((await call("GET", "/v1/me")).status).toBe(401);
    const catalog = await recordingFetch(`${gateway.url}/v1/catalog`);
    expect(catalog.status).toBe(200);
    expect((await recordingFetch(`${gateway.url}/v1/catalog`, { headers: { "if-none-match": catalog.headers.get("etag")! } })).status).toBe(304);
    expect((await call("GET", "/healthz")).status).toBe(200);
    expect((await call("GET", "/readyz")).status).toBe(200);
    expect((await call("GET", "/metrics", { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
    expect((await call("GET", "/metrics")).status).toBe(401);

    // ---- /dashboard/api, the rest ----
    expect((await dash.get("/keys")).status).toBe(200);
    expect((await dash.get(`/keys/${keyId}`)).status).toBe(200);
    expect((await dash.patch(`/keys/${keyId}`, { token_cap: 1_000_000, limits: { requests_per_minute: 100 } })).status).toBe(200);
    expect((await dash.get("/usage?days=7")).status).toBe(200);
    expect((await dash.get("/ledger.csv")).status).toBe(200);
    const models = await dash.get(`/models?key_id=${keyId}`);
    expect(models.status).toBe(200);
    expect(models.body.data.length).toBeGreaterThan(0);
    expect((await dash.get("/models")).status).toBe(200);
    expect((await dash.get("/guardrails")).status).toBe(200);
    // The request log is written behind the request path: flushed before it is read.
    await gateway.app.ctx.pipeline.requestLog!.flush();
    const requests = await dash.get("/requests?limit=5");
    expect(requests.status).toBe(200);
    expect(requests.body.data.length).toBeGreaterThan(0);
    expect((await dash.get("/requests.csv")).status).toBe(200);
    expect((await dash.get("/requests?status=nope")).status).toBe(400);
    const spare = await dash.post("/keys", { name: "spare" });
    // An enabled key answers with itself; a revoked one is never re-enabled (409 conflict).
    expect((await dash.post(`/keys/${spare.body.key.id}/enable`)).status).toBe(200);
    expect((await dash.delete(`/keys/${spare.body.key.id}`)).status).toBe(400);
    expect((await dash.delete(`/keys/${spare.body.key.id}?confirm=true`)).status).toBe(200);
    expect((await dash.post(`/keys/${spare.body.key.id}/enable`)).status).toBe(409);
    expect((await dash.delete(`/keys/${spare.body.key.id}?confirm=true&permanent=true`)).status).toBe(200);
    const ws = await dash.post("/workspaces", { name: "Team" });
    expect(ws.status).toBe(201);
    const wsId: string = ws.body.workspace.id;
    expect((await dash.get("/workspaces")).status).toBe(200);
    // The response cache's opt-in from the dashboard, per own key and per workspace.
    for (const target of [`/keys/${keyId}`, `/workspaces/${wsId}`]) {
      expect((await dash.patch(`${target}/cache`, { ttl_seconds: 60 })).status).toBe(200);
      expect((await dash.get(`${target}/cache`)).status).toBe(200);
      expect((await dash.delete(`${target}/cache`)).status).toBe(200);
    }
    const invite = await dash.post(`/workspaces/${wsId}/invites`, { role: "admin" });
    expect(invite.status).toBe(201);
    const { account: other, client: otherDash } = await signedInAccount(gateway);
    recordDashboard(otherDash);
    expect((await otherDash.post("/invites/accept", { token: invite.body.token })).status).toBe(200);
    expect((await otherDash.get(`/workspaces/${wsId}/invites`)).status).toBe(200);
    const second = await dash.post(`/workspaces/${wsId}/invites`, {});
    expect((await dash.get(`/workspaces/${wsId}/invites`)).status).toBe(200);
    expect((await dash.delete(`/workspaces/${wsId}/invites/${second.body.invite.id}`)).status).toBe(204);
    expect((await dash.patch(`/workspaces/${wsId}/members/${other.id}`, { role: "member" })).status).toBe(200);
    expect((await dash.get(`/workspaces/${wsId}`)).status).toBe(200);
    const shared = await otherDash.post("/keys", { name: "shared", workspace_id: wsId });
    expect(shared.status).toBe(201);
    expect((await dash.get(`/workspaces/${wsId}/keys`)).status).toBe(200);
    expect((await dash.get(`/workspaces/${wsId}/usage`)).status).toBe(200);
    expect((await dash.patch(`/workspaces/${wsId}/budgets`, { monthly_budget_usd: "50", member_monthly_budget_usd: "10", allowed_models: ["gpt-mock"] })).status).toBe(200);
    expect((await dash.get(`/workspaces/${wsId}/budgets`)).status).toBe(200);
    for (const base of [`/workspaces/${wsId}/alerts`, "/admin/alerts"]) {
      const sub = await dash.post(base, { url: "https://alerts.example.com/hook", format: "slack", events: ["budget.threshold", "report.daily"] });
      expect(sub.status, base).toBe(201);
      const item = `${base}/${sub.body.subscription.id}`;
      expect((await dash.get(base)).status).toBe(200);
      expect((await dash.patch(item, { enabled: false })).status).toBe(200);
      expect((await dash.post(`${item}/test`, {})).status).toBe(202);
      expect((await dash.get(`${item}/deliveries`)).status).toBe(200);
      expect((await dash.delete(item)).status).toBe(200);
    }
    expect((await dash.get("/reports/spend?period=weekly")).status).toBe(200);
    expect((await dash.get(`/reports/spend?format=csv&workspace_id=${wsId}`)).status).toBe(200);
    expect((await dash.delete(`/workspaces/${wsId}/keys/${shared.body.key.id}?confirm=true`)).status).toBe(200);
    expect((await dash.delete(`/workspaces/${wsId}/members/${other.id}`)).status).toBe(204);
    expect((await otherDash.get(`/workspaces/${wsId}`)).status).toBe(404);
    expect((await otherDash.get("/admin/accounts")).status).toBe(403);
    expect((await dash.get("/admin/accounts?limit=10")).status).toBe(200);
    expect((await dash.get("/admin/workspaces?limit=10")).status).toBe(200);
    expect((await dash.post("/admin/tag-budgets", { tag: "team=dash", monthly_token_budget: 100 })).status).toBe(200);
    expect((await otherDash.get("/admin/tag-budgets")).status).toBe(403);
    expect((await dash.get("/admin/tag-budgets")).status).toBe(200);
    expect((await dash.delete("/admin/tag-budgets?tag=team%3Ddash")).status).toBe(200);
    expect((await dash.get("/admin/upstreams")).status).toBe(200);
    expect((await dash.get("/admin/audit?limit=10")).status).toBe(200);
    expect((await dash.get("/admin/requests?limit=5")).status).toBe(200);
    expect((await dash.get("/admin/requests.csv")).status).toBe(200);
    expect((await otherDash.get("/admin/requests")).status).toBe(403);
    expect((await dash.patch(`/admin/accounts/${other.id}`, { clamp_output: false })).status).toBe(200);
    expect((await dash.patch(`/admin/accounts/${me.id}`, { status: "suspended" })).status).toBe(400);
    expect((await dash.get(`/admin/accounts/${other.id}`)).status).toBe(200);
    expect((await dash.get("/admin/accounts/acct_nope")).status).toBe(404);
    expect((await dash.post(`/admin/accounts/${other.id}/credits`, { amount_usd: "2.00", reason: "openapi" })).status).toBe(200);
    expect((await dash.post(`/admin/accounts/${other.id}/debits`, { amount_usd: "0.50", reason: "openapi" })).status).toBe(200);
    expect((await dash.post(`/admin/accounts/${other.id}/credits`, { amount_usd: "2.00" })).status).toBe(400);
    expect((await otherDash.post(`/admin/accounts/${other.id}/credits`, { amount_usd: "2.00", reason: "mine" })).status).toBe(403);
    // The administrator's own ledger has usage rows (every pricing dimension's fields), the other's a credit and a debit.
    const adminLedger = await dash.get(`/admin/accounts/${me.id}/ledger?limit=5`);
    expect(adminLedger.status).toBe(200);
    expect(adminLedger.body.data.length).toBeGreaterThan(0);
    expect((await dash.get(`/admin/accounts/${other.id}/ledger`)).status).toBe(200);
    expect((await dash.get(`/admin/accounts/${other.id}/ledger?before=nope`)).status).toBe(400);
    const dashProviderKey = await dash.post(`/admin/accounts/${other.id}/provider-keys`, { provider: "mockai", key: "sk-dash-own-key-123456789", label: "own" });
    expect(dashProviderKey.status).toBe(201);
    expect((await dash.post(`/admin/accounts/${other.id}/provider-keys`, { provider: "nobody", key: "sk-dash-own-key-123456789" })).status).toBe(400);
    expect((await dash.get(`/admin/accounts/${other.id}/provider-keys`)).status).toBe(200);
    expect((await dash.delete(`/admin/accounts/${other.id}/provider-keys/${dashProviderKey.body.provider_key.id}`)).status).toBe(200);
    // The live catalog's page: this gateway's catalog comes from its file, so the writes answer 409
    // (they are driven on a database catalog in test/dashboard/catalog.test.ts).
    const fileCatalog = await dash.get("/admin/catalog");
    expect(fileCatalog.status).toBe(200);
    expect((await otherDash.get("/admin/catalog")).status).toBe(403);
    expect((await dash.get("/admin/catalog/versions?limit=5")).status).toBe(200);
    expect((await dash.get("/admin/catalog/versions/1")).status).toBe(404);
    expect((await dash.get("/admin/catalog/diff?from=1")).status).toBe(404);
    expect((await dash.post("/admin/catalog/rollback", { version: 1 })).status).toBe(409);
    expect((await dash.post("/admin/catalog/provider-keys", { provider: "mockai", key: "sk-catalog-key-123456" })).status).toBe(409);
    expect((await dash.post("/admin/catalog/price-import", { format: "csv", content: "model,input_per_mtok\ngpt-mock,2", base_version: 1, dry_run: true })).status).toBe(409);
    // The file's keys (fk_…) are enabled and disabled here; a key the file does not list is 404.
    expect((await dash.patch(`/admin/catalog/provider-keys/${fileCatalog.body.provider_keys[0].id}`, { status: "active" })).status).toBe(200);
    expect((await dash.patch("/admin/catalog/provider-keys/pk_nope", { status: "disabled" })).status).toBe(404);
    expect((await dash.delete("/admin/catalog/provider-keys/pk_nope")).status).toBe(409);
    expect((await dash.post("/admin/catalog/provider-keys/pk_nope/test", {})).status).toBe(404);
    expect((await dash.get("/admin/catalog/entry-options")).status).toBe(200);
    for (const route of CATALOG_ENTITY_ROUTES) {
      const { path, body, expected } = entityCall(route);
      const answer = route.method === "GET" ? await dash.get(`/admin${path}`) : await dash.request(route.method, `/dashboard/api/admin${path}`, body);
      expect(answer.status, `${route.method} ${path}`).toBe(expected);
    }
    const adminUsage = await dash.get("/admin/usage?days=7");
    expect(adminUsage.status).toBe(200);
    expect(adminUsage.body.by_account.length).toBeGreaterThan(0);
    expect((await otherDash.get("/admin/usage")).status).toBe(403);
    // Redemption codes: minted, listed and revoked by the administrator, redeemed by the other account.
    const minted = await dash.post("/admin/codes", { value_usd: "3.00", count: 2, batch: "openapi", note: "test" });
    expect(minted.status).toBe(201);
    expect((await dash.post("/admin/codes", { value_usd: "3.00", expires_in_days: 1, expires_at: "2099-01-01T00:00:00Z" })).status).toBe(400);
    expect((await otherDash.post("/admin/codes", { value_usd: "3.00" })).status).toBe(403);
    expect((await dash.get("/admin/codes?limit=10&batch=openapi")).status).toBe(200);
    expect((await dash.post(`/admin/codes/${minted.body.data[1].id}/revoke`)).status).toBe(200);
    expect((await otherDash.post("/redeem", { code: minted.body.data[0].code })).status).toBe(200);
    const unknownCode = await otherDash.post("/redeem", { code: "GW-NOT-A-REAL-CODE" });
    expect(unknownCode.status).toBe(400);
    expect(unknownCode.body.error.type).toBe("code_not_redeemable");
    expect((await otherDash.get("/admin/codes")).status).toBe(403);
    // Card top-ups: the bounds, a Checkout (the mock Stripe API), then Stripe's signed events.
    expect((await dash.get("/topup")).body.enabled).toBe(true);
    const checkout = await dash.post("/topup/checkout", { amount_usd: "10.00" });
    expect(checkout.status, checkout.text).toBe(201);
    expect((await dash.post("/topup/checkout", { amount_usd: "1.00" })).status).toBe(400);
    const stripeEvent = async (event: { id: string }) =>
      call("POST", "/webhooks/stripe", {
        body: event,
        headers: { "stripe-signature": Stripe.webhooks.generateTestHeaderString({ payload: JSON.stringify(event), secret: STRIPE_SECRET }) },
      });
    const paymentIntent = `pi_openapi_${kind}`;
    expect((await stripeEvent(checkoutCompleted({ eventId: `evt_oa_1_${kind}`, sessionId: checkout.body.id, accountId: me.id, cents: 1000, paymentIntent }))).status).toBe(200);
    for (const n of [2, 3]) {
      const held = await stripeEvent(disputeCreated({ eventId: `evt_oa_${n}_${kind}`, disputeId: `dp_oa_${n}`, paymentIntent, amount: 10_000_000 }));
      expect(held.body.status).toBe("pending");
    }
    expect((await call("POST", "/webhooks/stripe", { body: { id: "evt_x" }, headers: { "stripe-signature": "t=1,v1=00" } })).status).toBe(400);
    expect((await otherDash.post("/signout")).status).toBe(204);
    expect((await otherDash.get("/session")).status).toBe(401);
    const visitor = recordDashboard(new DashboardClient(gateway.url));
    expect((await visitor.post("/signup", { email: `new-${kind}@example.com`, password: "a long enough password" })).status).toBe(201);
    expect((await visitor.post("/signin", { email: `new-${kind}@example.com`, password: "wrong password" })).status).toBe(401);
    // People who sign in: a person added with a set-password link, the link checked and used, a reset link, a password change.
    const person = await dash.post("/admin/accounts", { email: `person-${kind}@example.com` });
    expect(person.status).toBe(201);
    const personToken: string = person.body.password_link.url.split("#")[1];
    expect((await visitor.post("/set-password/check", { token: personToken })).status).toBe(200);
    const personSession = await visitor.post("/set-password", { token: personToken, password: "a long enough password" });
    expect(personSession.status).toBe(200);
    expect((await visitor.post("/set-password/check", { token: personToken })).status).toBe(410);
    expect((await dash.post(`/admin/accounts/${person.body.account.id}/password-link`)).status).toBe(201);
    visitor.csrf = personSession.body.csrf_token;
    const changed = await visitor.post("/account/password", { current_password: "a long enough password", new_password: "another long password" });
    expect(changed.status).toBe(200);
    visitor.csrf = changed.body.csrf_token;
    expect((await visitor.post("/account/password", { current_password: "wrong", new_password: "a third long password" })).status).toBe(400);

    // ---- /admin/v1 ----
    const token: string = (await cli(["admin", "token", "create", "--name", "openapi", ...ADMIN_SCOPES.flatMap((s) => ["--scope", s])])).token;
    const adminHeaders = { authorization: `Bearer ${token}` };
    const adminCall = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      call(method, `/admin/v1${path}`, { body, headers: { ...adminHeaders, ...headers } });
    const account = await adminCall("POST", "/accounts", { email: `admin-made-${kind}@example.com`, balance_usd: "5.00" });
    expect(account.status).toBe(201);
    const accountId: string = account.body.account.id;
    const withLink = await adminCall("POST", "/accounts", { email: `admin-person-${kind}@example.com`, password_link: true });
    expect(withLink.status).toBe(201);
    expect(withLink.body.password_link.purpose).toBe("setup");
    expect((await adminCall("POST", `/accounts/${accountId}/password-link`)).status).toBe(201);
    expect((await adminCall("POST", `/accounts/${me.id}/password-link`)).status).toBe(403);
    expect((await adminCall("GET", "/accounts?limit=1")).status).toBe(200);
    expect((await adminCall("POST", "/tag-budgets", { tag: "project=openapi", monthly_budget_usd: "3" })).status).toBe(200);
    expect((await adminCall("POST", "/tag-budgets", { tag: "project=openapi" })).status).toBe(400);
    expect((await adminCall("GET", "/tag-budgets")).status).toBe(200);
    expect((await adminCall("DELETE", "/tag-budgets?tag=project%3Dopenapi")).status).toBe(200);
    expect((await adminCall("DELETE", "/tag-budgets?tag=project%3Dopenapi")).status).toBe(404);
    expect((await adminCall("GET", `/accounts/${accountId}`)).status).toBe(200);
    expect((await adminCall("GET", "/accounts/nope")).status).toBe(404);
    expect((await adminCall("PATCH", `/accounts/${accountId}`, { monthly_budget_usd: "20" })).status).toBe(200);
    expect((await adminCall("PATCH", `/accounts/${accountId}`, {})).status).toBe(400);
    expect((await adminCall("POST", `/accounts/${accountId}/credits`, { amount_usd: "1.50", reason: "test" }, { "idempotency-key": `credit-${kind}` })).status).toBe(200);
    expect((await adminCall("POST", `/accounts/${accountId}/debits`, { amount_usd: "0.50", reason: "test" }, { "idempotency-key": `debit-${kind}` })).status).toBe(200);
    const adminKey = await adminCall("POST", `/accounts/${accountId}/keys`, { name: "made", token_cap: 1000 });
    expect(adminKey.status).toBe(201);
    expect((await adminCall("GET", `/accounts/${accountId}/keys`)).status).toBe(200);
    expect((await adminCall("GET", `/keys/${adminKey.body.key.id}`)).status).toBe(200);
    expect((await adminCall("PATCH", `/keys/${adminKey.body.key.id}`, { period: "day", period_budget_usd: "1" })).status).toBe(200);
    expect((await adminCall("POST", `/keys/${adminKey.body.key.id}/revoke`)).status).toBe(200);
    const providerKey = await adminCall("POST", `/accounts/${accountId}/provider-keys`, { provider: "mockai", key: "sk-own-key-123456789" });
    expect(providerKey.status).toBe(201);
    expect((await adminCall("GET", `/accounts/${accountId}/provider-keys`)).status).toBe(200);
    expect((await adminCall("DELETE", `/accounts/${accountId}/provider-keys/${providerKey.body.provider_key.id}`)).status).toBe(200);
    expect((await adminCall("GET", `/accounts/${me.id}/usage?days=7`)).status).toBe(200);
    expect((await adminCall("GET", "/audit?limit=20")).status).toBe(200);
    expect((await adminCall("PATCH", `/workspaces/${wsId}/budgets`, { monthly_token_budget: 1_000_000, allowed_models: null })).status).toBe(200);
    expect((await adminCall("GET", `/workspaces/${wsId}/budgets`)).status).toBe(200);
    // The response cache's opt-in (ADR 0044), per key and per workspace.
    for (const target of [`/keys/${adminKey.body.key.id}`, `/workspaces/${wsId}`]) {
      expect((await adminCall("PATCH", `${target}/cache`, { ttl_seconds: 60 })).status).toBe(200);
      expect((await adminCall("GET", `${target}/cache`)).status).toBe(200);
      expect((await adminCall("DELETE", `${target}/cache`)).status).toBe(200);
    }
    expect((await adminCall("GET", "/workspaces?limit=5")).status).toBe(200);
    expect((await adminCall("POST", "/config/reload", {})).status).toBe(200);
    // This gateway's catalog comes from its file: read-only (the writes are driven in test/admin/live-catalog.test.ts).
    expect((await adminCall("GET", "/catalog")).status).toBe(200);
    expect((await adminCall("GET", "/catalog/versions?limit=5")).status).toBe(200);
    expect((await adminCall("GET", "/catalog/versions/1")).status).toBe(404);
    expect((await adminCall("GET", "/catalog/diff?from=1")).status).toBe(404);
    expect((await adminCall("POST", "/catalog/versions", { document: {}, base_version: 1 })).status).toBe(409);
    expect((await adminCall("POST", "/catalog/price-import", { format: "json", content: "[]", base_version: 1 })).status).toBe(409);
    expect((await adminCall("POST", "/catalog/rollback", { version: 1 })).status).toBe(409);
    expect((await adminCall("POST", "/catalog/provider-keys", { provider: "mockai", key: "sk-catalog-key-123456" })).status).toBe(409);
    expect((await adminCall("PATCH", "/catalog/provider-keys/pk_nope", { status: "active" })).status).toBe(404);
    expect((await adminCall("DELETE", "/catalog/provider-keys/pk_nope")).status).toBe(409);
    expect((await adminCall("POST", "/catalog/provider-keys/pk_nope/test")).status).toBe(404);
    expect((await adminCall("GET", "/catalog/entry-options")).status).toBe(200);
    for (const route of CATALOG_ENTITY_ROUTES) {
      const { path, body, expected } = entityCall(route);
      expect((await adminCall(route.method, path, body)).status, `${route.method} ${path}`).toBe(expected);
    }
    const adminMinted = await adminCall("POST", "/codes", { value_usd: "1.00", count: 1, expires_in_days: 30 });
    expect(adminMinted.status).toBe(201);
    expect((await adminCall("POST", "/codes", { value_usd: "1.00", count: 0 })).status).toBe(400);
    expect((await adminCall("GET", "/codes?limit=5&state=unused")).status).toBe(200);
    expect((await adminCall("GET", "/codes?state=lost")).status).toBe(400);
    expect((await adminCall("POST", `/codes/${adminMinted.body.data[0].id}/revoke`)).status).toBe(200);
    expect((await adminCall("POST", "/codes/code_nope/revoke")).status).toBe(404);
    expect((await adminCall("GET", "/stripe/events?status=pending&limit=5")).body.data).toHaveLength(2);
    expect((await adminCall("POST", `/stripe/events/evt_oa_2_${kind}/confirm`)).status).toBe(200);
    expect((await adminCall("POST", `/stripe/events/evt_oa_3_${kind}/dismiss`)).status).toBe(200);
    expect((await adminCall("POST", `/stripe/events/evt_oa_3_${kind}/confirm`)).status).toBe(409);
    const subscription = await adminCall("POST", "/alerts/subscriptions", { url: "https://alerts.example.com/hook", events: ["budget.threshold"], workspace_id: wsId });
    expect(subscription.status).toBe(201);
    const subscriptionId = subscription.body.subscription.id;
    expect((await adminCall("GET", `/alerts/subscriptions?workspace_id=${wsId}`)).status).toBe(200);
    expect((await adminCall("PATCH", `/alerts/subscriptions/${subscriptionId}`, { format: "slack" })).status).toBe(200);
    expect((await adminCall("POST", `/alerts/subscriptions/${subscriptionId}/test`)).status).toBe(202);
    expect((await adminCall("GET", `/alerts/subscriptions/${subscriptionId}/deliveries?limit=5`)).status).toBe(200);
    expect((await adminCall("DELETE", `/alerts/subscriptions/${subscriptionId}`)).status).toBe(200);
    expect((await call("GET", "/admin/v1/accounts")).status).toBe(401);

    // ---- every answer against its operation ----
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(document, "openapi");
    const templates = Object.keys(document.paths)
      .map((template) => ({ template, pattern: pathPattern(template) }))
      // The longest path first (a trailing parameter takes the rest of a path, for wildcard routes),
      // then a literal segment before a parameter.
      .sort((a, b) => b.template.split("/").length - a.template.split("/").length || (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
    // The schemas really check: a /v1/me answer without its fields, or with one too many, is refused.
    const meSchema = ajv.getSchema("openapi#/paths/~1v1~1me/get/responses/200/content/application~1json/schema")!;
    const meAnswer = recorded.find((answer) => answer.path === "/v1/me" && answer.status === 200)!.body as Record<string, unknown>;
    expect(meSchema(meAnswer)).toBe(true);
    expect(meSchema({ ...meAnswer, balance_usd: undefined })).toBe(false);
    expect(meSchema({ ...meAnswer, surprise: 1 })).toBe(false);
    const problems: string[] = [];
    const checkedOperations = new Set<string>();
    for (const answer of recorded) {
      const method = answer.method.toLowerCase();
      const match = templates.find((t) => t.pattern.test(answer.path) && document.paths[t.template]![method]);
      if (!match) {
        problems.push(`${answer.method} ${answer.path}: no operation`);
        continue;
      }
      checkedOperations.add(`${answer.method} ${match.template}`);
      const responses = document.paths[match.template]![method]!.responses;
      const statusKey = [String(answer.status), `${String(answer.status)[0]}XX`, "default"].find((key) => responses[key]);
      if (!statusKey) {
        problems.push(`${answer.method} ${answer.path}: status ${answer.status} not described`);
        continue;
      }
      const declared = responses[statusKey]!.content ?? {};
      const mediaType = answer.contentType.split(";")[0]!.trim();
      if (answer.status === 204 || answer.status === 304) {
        if (Object.keys(declared).length > 0) problems.push(`${answer.method} ${answer.path}: ${answer.status} declares a body`);
        continue;
      }
      const declaredType = Object.keys(declared).find((type) => type === mediaType || (type === "application/octet-stream" && !mediaType.includes("json")));
      if (!declaredType) {
        problems.push(`${answer.method} ${answer.path} ${answer.status}: content-type ${mediaType} not described (${Object.keys(declared).join(", ")})`);
        continue;
      }
      if (declaredType !== "application/json") continue;
      const pointer = ["paths", match.template, method, "responses", statusKey, "content", "application/json", "schema"]
        .map((part) => part.replace(/~/g, "~0").replace(/\//g, "~1"))
        .join("/");
      const validateAnswer = ajv.getSchema(`openapi#/${pointer}`)!;
      if (!validateAnswer(answer.body))
        problems.push(`${answer.method} ${answer.path} ${answer.status}: ${ajv.errorsText(validateAnswer.errors)} in ${JSON.stringify(answer.body).slice(0, 300)}`);
    }
    expect(problems).toEqual([]);
    // Every operation was driven at least once.
    const documented = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(documented.filter((operation) => !checkedOperations.has(operation))).toEqual([]);
  });
});

/**
 * A call of a per-entity catalog route on a gateway whose catalog comes from its file: reads answer
 * (a routing group or an MCP server: 404, the file's catalog has none), writes are 409 catalog_read_only (they are driven on a
 * database catalog in test/admin/catalog-entities.test.ts).
 */
function entityCall(route: (typeof CATALOG_ENTITY_ROUTES)[number]): { path: string; body: unknown; expected: number } {
  const name = { provider: "mockai", model: "gpt-mock", tier: "standard", routing_group: "gpt-mock", mcp_server: "files" }[route.kind];
  const path = route.url.replace(":name", name) + (route.method === "DELETE" ? "?base_version=1" : "");
  const absent = route.kind === "routing_group" || route.kind === "mcp_server";
  if (route.method === "GET") return { path, body: undefined, expected: absent && route.url.endsWith(":name") ? 404 : 200 };
  const body =
    route.method === "DELETE"
      ? undefined
      : route.method === "PATCH"
        ? { set: {}, base_version: 1 }
        : route.url.endsWith("able")
          ? { base_version: 1 }
          : { name: "x", entry: {}, base_version: 1 };
  return { path, body, expected: 409 };
}
