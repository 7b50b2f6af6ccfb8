// Claude Code's gateway protocol (docs/clients.md): anthropic-* headers and Messages body fields
// reach an Anthropic-native upstream unchanged (our own auth never does), /v1/models answers in
// Anthropic's shape to Anthropic-style callers, count_tokens asks the upstream's own counter
// (never billed) or gives the estimate, and the attribution headers land on the request's log line.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { estimateMessagesPromptTokens } from "../../src/formats/messages/messages-over-chat.js";
import { anthropicMessage, chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";

const UPSTREAM_KEY = "sk-ant-mock-key-0001";
const BETAS = "claude-code-20250219,interleaved-thinking-2025-05-14,context-management-2025-06-27,effort-2025-11-24";
const SESSION = "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0";
const PROMPT = "PROMPT-TEXT-7h3-s3cr3t-pl4n";

/** A request body as Claude Code 2.1 sends it, with the fields the protocol reference lists. */
function claudeCodeBody(model: string): Record<string, unknown> {
  return {
    model,
    max_tokens: 1024,
    system: [
      { type: "text", text: "x-anthropic-billing-header: cc_version=2.1.197.abc; cc_entrypoint=cli;" },
      { type: "text", text: "You are Claude Code.", cache_control: { type: "ephemeral" } },
    ],
    messages: [
      { role: "user", content: [{ type: "text", text: PROMPT, cache_control: { type: "ephemeral", ttl: "1h" } }] },
      { role: "system", content: "A mid-conversation system message." },
    ],
    tools: [
      { name: "Read", description: "Reads a file", input_schema: { type: "object", properties: { file_path: { type: "string" } } }, strict: true },
      { name: "mcp__x__y", description: "Deferred", input_schema: { type: "object" }, defer_loading: true },
    ],
    tool_choice: { type: "auto" },
    thinking: { type: "adaptive", display: "omitted" },
    output_config: { effort: "high" },
    context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
    metadata: { user_id: '{"device_id":"d1","session_id":"s1"}' },
    stream: false,
  };
}

describe("Claude Code's gateway protocol", () => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }));
    const created = await gateway.createAccount({ balance: "10" });
    key = created.raw;
    accountId = created.account.id;
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });
  beforeEach(() => {
    mock.requests.length = 0;
  });

  function post(path: string, body: unknown, headers: Record<string, string>) {
    return fetch(`${gateway.url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  }

  function logLine(requestId: string | null): Record<string, unknown> {
    const line = gateway.logs.find((l) => l.request_id === requestId && l.msg === "request");
    expect(line, `no log line for ${requestId}`).toBeDefined();
    return line!;
  }

  describe("pass-through to an Anthropic-native upstream", () => {
    it("forwards anthropic-* headers and every body field unchanged but the model; the gateway key never leaves", async () => {
      mock.handler = (_req, res) => json(res, 200, anthropicMessage("done"));
      const body = claudeCodeBody("claude-mock");
      const auths: Array<Record<string, string>> = [{ "x-api-key": key }, { authorization: `Bearer ${key}` }];
      for (const auth of auths) {
        mock.requests.length = 0;
        const response = await post("/v1/messages?beta=true", body, {
          ...auth,
          "anthropic-version": "2023-06-01",
          "anthropic-beta": BETAS,
          "anthropic-future-capability": "v1; mode=a",
          "x-claude-code-session-id": SESSION,
          "x-app": "cli",
        });
        expect(response.status, await response.clone().text()).toBe(200);
        expect(mock.requests).toHaveLength(1);
        const upstream = mock.requests[0]!;
        expect(upstream.url).toBe("/v1/messages");
        expect(upstream.body).toEqual({ ...body, model: "claude-upstream" });
        expect(upstream.headers["anthropic-version"]).toBe("2023-06-01");
        expect(upstream.headers["anthropic-beta"]).toBe(BETAS);
        expect(upstream.headers["anthropic-future-capability"]).toBe("v1; mode=a");
        expect(upstream.headers["x-api-key"]).toBe(UPSTREAM_KEY);
        expect(upstream.headers.authorization).toBeUndefined();
        // Consumed, not forwarded: the session id is the gateway's to record.
        expect(upstream.headers["x-claude-code-session-id"]).toBeUndefined();
        expect(JSON.stringify(upstream.headers)).not.toContain(key);
      }
    });

    it("a repeated anthropic-beta header reaches the upstream as one list", async () => {
      mock.handler = (_req, res) => json(res, 200, anthropicMessage("done"));
      const headers = new Headers({ "content-type": "application/json", "x-api-key": key, "anthropic-version": "2023-06-01" });
      headers.append("anthropic-beta", "context-management-2025-06-27");
      headers.append("anthropic-beta", "effort-2025-11-24");
      const response = await fetch(`${gateway.url}/v1/messages`, { method: "POST", headers, body: JSON.stringify(claudeCodeBody("claude-mock")) });
      expect(response.status).toBe(200);
      const betas = String(mock.requests[0]!.headers["anthropic-beta"])
        .split(",")
        .map((v) => v.trim());
      expect(betas).toEqual(["context-management-2025-06-27", "effort-2025-11-24"]);
    });

    it("sends the default anthropic-version when the client gives none", async () => {
      mock.handler = (_req, res) => json(res, 200, anthropicMessage("done"));
      const response = await post("/v1/messages", claudeCodeBody("claude-mock"), { "x-api-key": key });
      expect(response.status).toBe(200);
      expect(mock.requests[0]!.headers["anthropic-version"]).toBe("2023-06-01");
      expect(mock.requests[0]!.headers["anthropic-beta"]).toBeUndefined();
    });

    it("keeps anthropic-* headers away from an OpenAI-compatible upstream (the bridge)", async () => {
      mock.handler = (_req, res) => json(res, 200, chatCompletion("done"));
      const response = await post(
        "/v1/messages",
        { model: "gpt-mock", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] },
        {
          "x-api-key": key,
          "anthropic-version": "2023-06-01",
          "anthropic-beta": BETAS,
        },
      );
      expect(response.status).toBe(200);
      const upstream = mock.requests[0]!;
      expect(upstream.url).toBe("/v1/chat/completions");
      expect(Object.keys(upstream.headers).filter((name) => name.startsWith("anthropic-"))).toEqual([]);
    });
  });

  describe("GET /v1/models", () => {
    it("answers the Anthropic SDK in Anthropic's shape, paging with after_id", async () => {
      const client = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0 });
      const ids: string[] = [];
      // limit 1: the SDK follows has_more/last_id through every page.
      for await (const model of client.models.list({ limit: 1 })) {
        expect(model).toEqual({ type: "model", id: model.id, display_name: model.id, created_at: "2025-01-01T00:00:00Z" });
        ids.push(model.id);
      }
      expect(ids).toEqual(["gpt-mock", "claude-mock"]);
      expect(await client.models.retrieve("claude-mock")).toMatchObject({ type: "model", id: "claude-mock", display_name: "claude-mock" });
      await expect(client.models.retrieve("premium-mock")).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    });

    it("tells the shapes apart by anthropic-version or x-api-key; a Bearer key alone gets OpenAI's", async () => {
      const get = (headers: Record<string, string>, query = "") => fetch(`${gateway.url}/v1/models${query}`, { headers });
      const anthropicShape = { data: expect.any(Array), has_more: false, first_id: "gpt-mock", last_id: "claude-mock" };
      const anthropicStyle: Array<Record<string, string>> = [{ "x-api-key": key }, { authorization: `Bearer ${key}`, "anthropic-version": "2023-06-01" }];
      for (const headers of anthropicStyle) {
        const page = (await (await get(headers, "?limit=1000")).json()) as Record<string, unknown>;
        expect(page).toEqual(anthropicShape);
        expect((page.data as Array<{ id: string }>).map((m) => m.id)).toEqual(["gpt-mock", "claude-mock"]);
      }
      const openai = (await (await get({ authorization: `Bearer ${key}` })).json()) as Record<string, unknown>;
      expect(openai).toMatchObject({ object: "list" });
      expect(openai.has_more).toBeUndefined();
      expect(openai.data).toEqual([
        { id: "gpt-mock", object: "model", created: 1735689600, owned_by: "mockai" },
        { id: "claude-mock", object: "model", created: 1735689600, owned_by: "mockanthropic" },
      ]);
    });

    it("pages with limit, after_id and before_id, and refuses bad values in Anthropic's envelope", async () => {
      const get = async (query: string) => {
        const response = await fetch(`${gateway.url}/v1/models${query}`, { headers: { "x-api-key": key } });
        return { status: response.status, body: (await response.json()) as Record<string, any> };
      };
      expect((await get("?limit=1")).body).toMatchObject({ has_more: true, first_id: "gpt-mock", last_id: "gpt-mock" });
      expect((await get("?limit=1&after_id=gpt-mock")).body).toMatchObject({ has_more: false, first_id: "claude-mock", last_id: "claude-mock" });
      expect((await get("?limit=1&before_id=claude-mock")).body).toMatchObject({ has_more: false, first_id: "gpt-mock", last_id: "gpt-mock" });
      expect((await get("?after_id=claude-mock")).body).toEqual({ data: [], has_more: false, first_id: null, last_id: null });
      for (const query of [
        "?limit=0",
        "?limit=1001",
        "?limit=abc",
        "?limit=1&limit=2",
        "?after_id=premium-mock",
        "?after_id=gpt-mock&before_id=claude-mock",
        `?after_id=${"x".repeat(300)}`,
      ]) {
        const refused = await get(query);
        expect(refused.status, query).toBe(400);
        expect(refused.body, query).toMatchObject({ type: "error", error: { type: "invalid_request" } });
      }
      const anonymous = await fetch(`${gateway.url}/v1/models`, { headers: { "anthropic-version": "2023-06-01" } });
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toMatchObject({ type: "error", error: { type: expect.any(String) } });
    });
  });

  describe("POST /v1/messages/count_tokens", () => {
    async function billingState() {
      const account = await gateway.app.ctx.store.accounts.get(accountId);
      return { balance: account!.balance, held: account!.held, ledger: await gateway.app.ctx.store.ledger.count(accountId) };
    }

    it("asks an Anthropic-native upstream's own counter and returns its number, unbilled", async () => {
      mock.handler = (req, res) => (req.url === "/v1/messages/count_tokens" ? json(res, 200, { input_tokens: 4242 }) : json(res, 500, { error: "unexpected" }));
      const admit = vi.spyOn(gateway.app.ctx.pipeline.billing, "admit");
      const before = await billingState();
      try {
        const client = new Anthropic({ apiKey: key, baseURL: gateway.url, maxRetries: 0, defaultHeaders: { "anthropic-beta": BETAS } });
        const counted = await client.messages.countTokens({ model: "claude-mock", system: "Be brief.", messages: [{ role: "user", content: PROMPT }] });
        expect(counted.input_tokens).toBe(4242);
        expect(admit).not.toHaveBeenCalled();
      } finally {
        admit.mockRestore();
      }
      expect(await billingState()).toEqual(before);
      expect(mock.requests).toHaveLength(1);
      const upstream = mock.requests[0]!;
      expect(upstream).toMatchObject({ method: "POST", url: "/v1/messages/count_tokens", key: UPSTREAM_KEY });
      expect(upstream.body).toEqual({ model: "claude-upstream", system: "Be brief.", messages: [{ role: "user", content: PROMPT }] });
      expect(upstream.headers["anthropic-beta"]).toBe(BETAS);
      expect(upstream.headers.authorization).toBeUndefined();

      // Claude Code's full body passes unchanged too.
      mock.requests.length = 0;
      const full = claudeCodeBody("claude-mock");
      const response = await post("/v1/messages/count_tokens?beta=true", full, { "x-api-key": key, "anthropic-version": "2023-06-01" });
      expect(await response.json()).toEqual({ input_tokens: 4242 });
      expect(mock.requests[0]!.body).toEqual({ ...full, model: "claude-upstream" });
      expect(await billingState()).toEqual(before);
    });

    it("answers the documented estimate for a model whose upstream has no counter, without calling it", async () => {
      const body = claudeCodeBody("gpt-mock");
      const response = await post("/v1/messages/count_tokens", body, { "x-api-key": key });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ input_tokens: estimateMessagesPromptTokens(body) });
      expect(mock.requests).toEqual([]);
    });

    it("passes the upstream's refusal on in Anthropic's envelope, and refuses a count that is not one", async () => {
      const before = await billingState();
      mock.handler = (_req, res) => json(res, 400, { type: "error", error: { type: "invalid_request_error", message: "messages.0.content: Field required" } });
      const refused = await post("/v1/messages/count_tokens", { model: "claude-mock", messages: [{ role: "user" }] }, { "x-api-key": key });
      expect(refused.status).toBe(400);
      const refusal = (await refused.json()) as { type: string; error: { type: string; message: string } };
      expect(refusal).toMatchObject({ type: "error", error: { type: "invalid_request" } });
      expect(refusal.error.message).toContain("Field required");

      for (const answer of [{ input_tokens: -1 }, { input_tokens: 1.5 }, { input_tokens: "12" }, {}, [4242], { input_tokens: 1e12 }]) {
        mock.handler = (_req, res) => json(res, 200, answer);
        const response = await post("/v1/messages/count_tokens", { model: "claude-mock", messages: [{ role: "user", content: "Hi" }] }, { "x-api-key": key });
        expect(response.status, JSON.stringify(answer)).toBe(502);
        expect(await response.json()).toMatchObject({ type: "error", error: { type: "provider_error" } });
      }
      expect(await billingState()).toEqual(before);
    });

    it("still checks the model and the key's tier before asking upstream", async () => {
      const unknown = await post("/v1/messages/count_tokens", { model: "no-such-model", messages: [] }, { "x-api-key": key });
      expect(unknown.status).toBe(404);
      const notInTier = await post("/v1/messages/count_tokens", { model: "premium-mock", messages: [] }, { "x-api-key": key });
      expect(notInTier.status).toBe(400);
      expect(await notInTier.json()).toMatchObject({ type: "error", error: { type: "not_supported" } });
      expect(mock.requests).toEqual([]);
    });
  });

  describe("attribution headers on the request's log line", () => {
    it("records Claude Code's session, agent and request class, and no prompt text", async () => {
      mock.handler = (_req, res) => json(res, 200, anthropicMessage("done"));
      const response = await post("/v1/messages", claudeCodeBody("claude-mock"), {
        "x-api-key": key,
        "x-claude-code-session-id": SESSION,
        "x-claude-code-agent-id": "agent-a1b2c3",
        "x-claude-code-parent-agent-id": "lead@team-alpha",
        "x-claude-code-request-class": "subagent",
        "x-claude-code-agent-type": "general-purpose",
        "x-claude-code-compaction": "auto",
        "x-claude-code-context-compacted": "manual",
        "x-app": "cli",
        "x-client-app": "my-ide-plugin",
        "x-claude-code-prev-tool-durations": "Bash=742;Read=9",
      });
      expect(response.status).toBe(200);
      const line = logLine(response.headers.get("x-request-id"));
      expect(line).toMatchObject({ path: "/v1/messages", status: 200, model: "claude-mock" });
      expect(line.attribution).toEqual({
        session_id: SESSION,
        agent_id: "agent-a1b2c3",
        parent_agent_id: "lead@team-alpha",
        request_class: "subagent",
        agent_type: "general-purpose",
        compaction: "auto",
        context_compacted: "manual",
        app: "cli",
        client_app: "my-ide-plugin",
      });
      expect(JSON.stringify(gateway.logs)).not.toContain(PROMPT);
    });

    it("leaves out every value outside its shape (length, characters, vocabulary)", async () => {
      mock.handler = (_req, res) => json(res, 200, anthropicMessage("done"));
      const response = await post("/v1/messages", claudeCodeBody("claude-mock"), {
        "x-api-key": key,
        "x-claude-code-session-id": "s".repeat(129),
        "x-claude-code-agent-id": "agent id with spaces",
        "x-claude-code-parent-agent-id": "<script>alert(1)</script>",
        "x-claude-code-request-class": "everything",
        "x-claude-code-agent-type": "a".repeat(65),
        "x-claude-code-compaction": "sometimes",
        "x-app": `cli"},"admin":true`,
        "x-client-app": "caf\u00e9",
      });
      expect(response.status).toBe(200);
      const line = logLine(response.headers.get("x-request-id"));
      expect(line).not.toHaveProperty("attribution");
      expect(JSON.stringify(line)).not.toContain("<script>");

      const partial = await post("/v1/messages", claudeCodeBody("claude-mock"), {
        "x-api-key": key,
        "x-claude-code-session-id": SESSION,
        "x-claude-code-agent-id": "x".repeat(200),
      });
      expect(logLine(partial.headers.get("x-request-id")).attribution).toEqual({ session_id: SESSION });
    });

    it("records them on count_tokens and model listings too", async () => {
      const counted = await post("/v1/messages/count_tokens", claudeCodeBody("gpt-mock"), { "x-api-key": key, "x-claude-code-session-id": SESSION });
      expect(logLine(counted.headers.get("x-request-id"))).toMatchObject({ path: "/v1/messages/count_tokens", model: "gpt-mock", attribution: { session_id: SESSION } });
      const listed = await fetch(`${gateway.url}/v1/models?limit=1000`, { headers: { "x-api-key": key, "x-claude-code-session-id": SESSION } });
      expect(logLine(listed.headers.get("x-request-id"))).toMatchObject({ path: "/v1/models", status: 200, attribution: { session_id: SESSION } });
    });
  });
});
