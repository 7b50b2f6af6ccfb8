// The request log (docs/dashboard.md, "Requests"; ADR 0023): every gateway request, answered or
// refused, reaches the log behind the request path; the dashboard pages it (the account's own rows;
// administrators see every account's and the unattributed ones), filters it and streams it as CSV.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, chatStream, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { expectError, signedInAccount, type DashboardClient } from "./support.js";

const SECRET_PROMPT = "the-prompt-text-must-never-be-stored";
const SECRET_ANSWER = "the-completion-text-must-never-be-stored";

describe.each(DATABASE_KINDS)("request log on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let admin: { client: DashboardClient; account: { id: string } };
  let user: { client: DashboardClient; account: { id: string } };
  let userKey: { id: string; raw: string };
  let other: { client: DashboardClient; account: { id: string } };
  const ids: Record<string, string> = {};

  const chat = (raw: string | null, body: object) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { ...(raw !== null && { authorization: `Bearer ${raw}` }), "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  const flush = () => gateway.app.ctx.pipeline.requestLog!.flush();

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = async (req, res) => {
      if (JSON.stringify(req.body).includes("slow please")) return chatStream(req, res, Array<string>(50).fill("x"), { delayMs: 50 });
      if ((req.body as { stream?: boolean }).stream) return chatStream(req, res, [SECRET_ANSWER], { usage: { prompt_tokens: 10, completion_tokens: 7, total_tokens: 17 } });
      return json(res, 200, chatCompletion(SECRET_ANSWER, { usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } }));
    };
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind });
    admin = await signedInAccount(gateway, { admin: true });
    user = await signedInAccount(gateway);
    other = await signedInAccount(gateway);
    const created = (await user.client.post("/keys", { name: "work" })).body;
    userKey = { id: created.key.id, raw: created.raw_key };
    const otherKey = (await other.client.post("/keys", { name: "theirs" })).body.raw_key;

    const answered = await chat(userKey.raw, { model: "gpt-mock", messages: [{ role: "user", content: SECRET_PROMPT }] });
    expect(answered.status).toBe(200);
    ids.answered = answered.headers.get("x-request-id")!;
    const streamed = await chat(userKey.raw, { model: "gpt-mock", stream: true, messages: [{ role: "user", content: SECRET_PROMPT }] });
    await streamed.text();
    ids.streamed = streamed.headers.get("x-request-id")!;
    const refused = await chat(userKey.raw, { model: "no-such-model", messages: [{ role: "user", content: SECRET_PROMPT }] });
    expect(refused.status).toBe(404);
    ids.refused = refused.headers.get("x-request-id")!;
    const anonymous = await chat(null, { model: "gpt-mock", messages: [{ role: "user", content: SECRET_PROMPT }] });
    expect(anonymous.status).toBe(401);
    ids.anonymous = anonymous.headers.get("x-request-id")!;
    const theirs = await chat(otherKey, { model: "gpt-mock", messages: [{ role: "user", content: SECRET_PROMPT }] });
    ids.theirs = theirs.headers.get("x-request-id")!;
    await flush();
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it("records answered and refused requests with their numbers, and no prompt or completion text", async () => {
    const page = await user.client.get("/requests");
    expect(page.status, page.text).toBe(200);
    const byId = new Map(page.body.data.map((row: { request_id: string }) => [row.request_id, row]));
    expect([...byId.keys()].sort()).toEqual([ids.answered, ids.streamed, ids.refused].sort());
    expect(byId.get(ids.answered)).toMatchObject({
      key_id: userKey.id,
      key_name: "work",
      method: "POST",
      route: "/v1/chat/completions",
      model: "gpt-mock",
      status: 200,
      error_type: null,
      attempts: 1,
      input_tokens: 1000,
      output_tokens: 500,
      cost_usd: "0.002",
      estimated: false,
      first_byte_ms: null,
    });
    const answered = byId.get(ids.answered) as { latency_ms: number; created_at: string };
    expect(answered.latency_ms).toBeGreaterThan(0);
    expect(Date.parse(answered.created_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(byId.get(ids.streamed)).toMatchObject({ status: 200, model: "gpt-mock", input_tokens: 10, output_tokens: 7, estimated: false });
    expect((byId.get(ids.streamed) as { first_byte_ms: number }).first_byte_ms).toBeGreaterThan(0);
    expect(byId.get(ids.refused)).toMatchObject({ status: 404, error_type: "not_found", cost_usd: null, input_tokens: null, estimated: null });
    // The model the client asked for, though none has that name; the error's message as the client got it.
    expect(byId.get(ids.refused)).toMatchObject({ requested_model: "no-such-model", model: null });
    expect((byId.get(ids.refused) as { error_message: string }).error_message).toMatch(/^The model no-such-model does not exist\./);
    expect(byId.get(ids.answered)).toMatchObject({ requested_model: "gpt-mock", error_message: null });
    // A customer never sees which provider served.
    expect(byId.get(ids.answered)).not.toHaveProperty("provider");
    const everything = JSON.stringify(await gateway.app.ctx.store.db.selectFrom("request_log").selectAll().execute(), (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v));
    expect(everything).not.toContain(SECRET_PROMPT);
    expect(everything).not.toContain(SECRET_ANSWER);
  });

  it("shows an account only its own requests; administrators see all, the unattributed ones included", async () => {
    const theirs = (await other.client.get("/requests")).body.data.map((r: { request_id: string }) => r.request_id);
    expect(theirs).toEqual([ids.theirs]);
    const all = await admin.client.get("/admin/requests?limit=200");
    expect(all.status).toBe(200);
    const anonymous = all.body.data.find((r: { request_id: string }) => r.request_id === ids.anonymous);
    expect(anonymous).toMatchObject({ status: 401, account_id: null, key_id: null, error_type: "auth_error" });
    expect(all.body.data.find((r: { request_id: string }) => r.request_id === ids.answered)).toMatchObject({ account_id: user.account.id, provider: "mockai" });
    const mine = await admin.client.get(`/admin/requests?account_id=${user.account.id}`);
    expect(mine.body.data).toHaveLength(3);
    expectError(await user.client.get("/admin/requests"), 403, "forbidden");
    expectError(await user.client.get("/admin/requests.csv"), 403, "forbidden");
  });

  it("filters by request id, status, model, key and time", async () => {
    const ofIds = async (query: string) => {
      const response = await user.client.get(`/requests?${query}`);
      expect(response.status, response.text).toBe(200);
      return response.body.data.map((r: { request_id: string }) => r.request_id).sort();
    };
    expect(await ofIds(`request_id=${ids.refused}`)).toEqual([ids.refused]);
    expect(await ofIds(`request_id=${ids.theirs}`)).toEqual([]);
    expect(await ofIds("status=4xx")).toEqual([ids.refused]);
    expect(await ofIds("status=error")).toEqual([ids.refused]);
    expect(await ofIds("status=200")).toEqual([ids.answered, ids.streamed].sort());
    expect(await ofIds("model=gpt-mock")).toEqual([ids.answered, ids.streamed].sort());
    expect(await ofIds(`key_id=${userKey.id}`)).toHaveLength(3);
    expect(await ofIds("key_id=key_of_someone_else")).toEqual([]);
    expect(await ofIds(`since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).toEqual([]);
    expect(await ofIds(`until=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}&since=${Date.now() - 600_000}`)).toHaveLength(3);
    for (const bad of [
      "status=abc",
      "limit=0",
      "limit=201",
      "cursor=nope",
      `cursor=${"9".repeat(19)}.1`,
      "since=yesterday",
      `request_id=${"x".repeat(101)}`,
      `model=${"m".repeat(201)}`,
    ]) {
      expectError(await user.client.get(`/requests?${bad}`), 400, "invalid_request");
    }
  });

  it("pages with a cursor, newest first, without gaps or repeats", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let i = 0; i < 10; i++) {
      const response = await admin.client.get(`/admin/requests?limit=2${cursor === null ? "" : `&cursor=${cursor}`}`);
      expect(response.status, response.text).toBe(200);
      seen.push(...response.body.data.map((r: { request_id: string }) => r.request_id));
      cursor = response.body.next_cursor;
      if (cursor === null) break;
    }
    const all = (await admin.client.get("/admin/requests?limit=200")).body.data.map((r: { request_id: string }) => r.request_id);
    expect(seen).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
    const times = (await admin.client.get("/admin/requests?limit=200")).body.data.map((r: { created_at: string }) => Date.parse(r.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it("exports CSV: the account's rows, filtered, formula-safe; administrators get the account and provider", async () => {
    const csv = await user.client.get("/requests.csv");
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    const lines = csv.text.trim().split("\r\n");
    expect(lines[0]).toBe(
      "created_at,request_id,key_id,key_name,method,route,requested_model,model,deployment,status,error_type,error_message,latency_ms,first_byte_ms,attempts,input_tokens,cached_tokens,output_tokens,reasoning_tokens,cost_usd,estimated",
    );
    expect(lines).toHaveLength(4);
    expect(csv.text).not.toContain(ids.theirs);
    const refused = await user.client.get("/requests.csv?status=4xx");
    expect(refused.text.trim().split("\r\n")).toHaveLength(2);
    expect(refused.text).toContain(ids.refused);
    const all = await admin.client.get("/admin/requests.csv");
    expect(all.text.split("\r\n")[0]).toMatch(/^created_at,request_id,account_id,.*,provider$/);
    expect(all.text).toContain(ids.anonymous);
  });

  it("streams a CSV larger than one page: chunked, every row once", async () => {
    const log = gateway.app.ctx.pipeline.requestLog!;
    const at = Date.now() - 3_600_000;
    for (let i = 0; i < 2_345; i++) {
      log.append({
        createdAt: at + Math.floor(i / 3), // several rows per ms: the cursor must break ties by id
        requestId: `req_bulk${String(i).padStart(6, "0")}`,
        accountId: other.account.id,
        keyId: null,
        method: "POST",
        route: "/v1/chat/completions",
        model: "gpt-mock",
        provider: "mockai",
        deployment: null,
        status: 200,
        errorType: null,
        errorMessage: null,
        requestedModel: "gpt-mock",
        latencyUs: 1_000,
        firstByteUs: null,
        attempts: 1,
        inputTokens: 1,
        cachedTokens: 0,
        outputTokens: 1,
        reasoningTokens: 0,
        costNano: 3_000n,
        estimated: 0,
      });
    }
    await flush();
    const response = await fetch(`${gateway.url}/dashboard/api/requests.csv`, { headers: { cookie: other.client.cookie! } });
    expect(response.status).toBe(200);
    expect(response.headers.get("transfer-encoding")).toBe("chunked");
    expect(response.headers.get("content-length")).toBeNull();
    const lines = (await response.text()).trim().split("\r\n").slice(1);
    const bulk = lines.filter((line) => line.includes("req_bulk"));
    expect(bulk).toHaveLength(2_345);
    expect(new Set(bulk.map((line) => line.split(",")[1])).size).toBe(2_345);
  });

  it("records a stream the client left as 499 client_aborted, with the time to its first byte", async () => {
    const abort = new AbortController();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${userKey.raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", stream: true, messages: [{ role: "user", content: "slow please" }] }),
      signal: abort.signal,
    });
    const requestId = response.headers.get("x-request-id")!;
    const reader = response.body!.getReader();
    await reader.read();
    abort.abort();
    await expect
      .poll(async () => {
        await flush();
        return (await user.client.get(`/requests?request_id=${requestId}`)).body.data[0];
      })
      .toMatchObject({ status: 499, error_type: "client_aborted", model: "gpt-mock" });
    const row = (await user.client.get(`/requests?request_id=${requestId}`)).body.data[0];
    expect(row.first_byte_ms).toBeGreaterThan(0);
    expect(row.latency_ms).toBeGreaterThanOrEqual(row.first_byte_ms);
    expect(row.error_message).toBe("The client closed the connection before the answer was complete.");
  });

  it("keeps an error's message but never text it quotes from the request or the upstream", async () => {
    const quoted = "the-prompt-an-upstream-quotes-back";
    const previous = mock.handler;
    mock.handler = (_req, res) => json(res, 400, { error: { message: `Invalid content: '${quoted}' is not allowed`, type: "invalid_request_error" } });
    const upstream = await chat(userKey.raw, { model: "gpt-mock", messages: [{ role: "user", content: quoted }] });
    mock.handler = previous;
    expect(upstream.status).toBe(400);
    // The client reads the upstream's words; the log keeps only that the upstream refused.
    expect(await upstream.text()).toContain(quoted);
    const badJson = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${userKey.raw}`, "content-type": "application/json" },
      body: `{"model": "gpt-mock", "messages": [{"role": "user", "content": "${SECRET_PROMPT}"`,
    });
    expect(badJson.status).toBe(400);
    expect(await badJson.text()).toContain("not valid JSON");
    await flush();
    const row = async (response: Response) => (await user.client.get(`/requests?request_id=${response.headers.get("x-request-id")}`)).body.data[0];
    expect(await row(upstream)).toMatchObject({
      error_type: "invalid_request",
      requested_model: "gpt-mock",
      error_message: "The upstream answered HTTP 400; its message is not kept in the request log.",
    });
    // The place of the fault, never the text around it.
    expect(await row(badJson)).toMatchObject({ error_type: "invalid_request", requested_model: null });
    expect((await row(badJson)).error_message).toMatch(/^The body is not valid JSON: at line 1, column \d+, expected /);
    const everything = JSON.stringify(await gateway.app.ctx.store.db.selectFrom("request_log").selectAll().execute(), (_k, v: unknown) => (typeof v === "bigint" ? String(v) : v));
    expect(everything).not.toContain(quoted);
    expect(everything).not.toContain(SECRET_PROMPT);
  });

  it("stays complete under concurrent load: one row per request, none dropped", async () => {
    const log = gateway.app.ctx.pipeline.requestLog!;
    const droppedBefore = log.droppedTotal;
    const responses = await Promise.all(
      Array.from({ length: 300 }, (_, i) => chat(userKey.raw, { model: i % 3 === 0 ? "nope" : "gpt-mock", messages: [{ role: "user", content: "hi" }] })),
    );
    const sent = responses.map((r) => r.headers.get("x-request-id")!);
    await Promise.all(responses.map((r) => r.text()));
    await flush();
    const rows = await gateway.app.ctx.store.db.selectFrom("request_log").select(["request_id", "status"]).where("request_id", "in", sent).execute();
    expect(rows).toHaveLength(300);
    expect(rows.filter((r) => r.status === 404n)).toHaveLength(100);
    expect(log.droppedTotal).toBe(droppedBefore);
  });

  it("does not log the dashboard's own requests, health checks or the admin API", async () => {
    await fetch(`${gateway.url}/healthz`);
    await flush();
    const routes = (await admin.client.get("/admin/requests?limit=200")).body.data.map((r: { route: string }) => r.route);
    expect(routes.filter((r: string) => r.startsWith("/dashboard") || r === "/healthz")).toEqual([]);
  });
});
