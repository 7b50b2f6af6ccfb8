// Tags through the gateway (docs/billing.md, "Tags and tag budgets"), on both databases: the header
// merged with the key's default tags (a default wins) and stored with the ledger row and in the request
// log; a malformed header refused naming it, nothing charged; a budget on a tag set through the admin API
// refusing with tag_budget_exceeded once the month's spend equals it, /v1/me listing it, an account's
// budget on a tag leaving other accounts alone, and the month rolling over on the gateway's clock.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { chatCompletion, json, startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { ADMIN_SCOPES } from "../../src/admin/scopes.js";
import { waitFor } from "../cli/gateway-process.js";
import { ledgerCsvLines } from "../../src/dashboard/ledger-csv.js";
import { formatUsd } from "../../src/core/money.js";
import { runCli } from "../../src/cli/main.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

interface Answer {
  status: number;
  body: { error?: { type: string; code?: string; param?: string; message: string }; [k: string]: unknown };
}

async function call(gateway: TestGateway, method: string, path: string, raw: string, body?: object, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(new URL(path, gateway.url), {
    method,
    headers: { authorization: `Bearer ${raw}`, ...(body && { "content-type": "application/json" }), ...headers },
    ...(body && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Answer["body"] };
}

const chat = { model: "gpt-mock", messages: [{ role: "user", content: "Hi" }], max_tokens: 100 };

describe.each(DATABASE_KINDS)("tags and tag budgets through the gateway on %s", (kind) => {
  let mock: MockUpstream;
  let gateway: TestGateway;
  let adminToken: string;
  const clock = { ms: Date.parse("2026-05-31T22:00:00Z") };

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handler = async (_req, res) => json(res, 200, chatCompletion("ok", { usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 } }));
    gateway = await startGateway(mockConfig({ openaiUrl: mock.url }), { kind, now: () => clock.ms });
    adminToken = (await gateway.app.ctx.store.adminTokens.create({ name: `tags-${kind}`, scopes: [...ADMIN_SCOPES] })).raw;
  });
  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  async function keyWith(defaultTags: Record<string, string> | null) {
    const { account } = await gateway.createAccount({ balance: "10" });
    const { key, raw } = await gateway.app.ctx.store.keys.create({ accountId: account.id, ...(defaultTags && { policy: { defaultTags } }) });
    return { account, key, raw };
  }

  const tagsOf = async (requestId: string) => {
    const db = gateway.app.ctx.store.db;
    const row = await db.selectFrom("ledger").select(["id", "cost_nano"]).where("request_id", "=", requestId).executeTakeFirstOrThrow();
    const tags = await db.selectFrom("ledger_tags").selectAll().where("ledger_id", "=", row.id).orderBy("tag").execute();
    return { cost: BigInt(row.cost_nano), tags };
  };

  it("stores the header's tags merged with the key's defaults with the ledger row and in the request log; a malformed header is 400", async () => {
    const { raw, account } = await keyWith({ project: "atlas" });
    const response = await fetch(new URL("/v1/chat/completions", gateway.url), {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json", "x-gateway-tags": "Env=prod, project=elsewhere" },
      body: JSON.stringify(chat),
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get("x-request-id")!;
    const { cost, tags } = await tagsOf(requestId);
    expect(cost).toBeGreaterThan(0n);
    // The key's default wins over the request's project; the request adds env.
    expect(tags.map((t) => [t.tag, t.account_id, BigInt(t.cost_nano), Number(t.tokens)])).toEqual([
      ["env=prod", account.id, cost, 1100],
      ["project=atlas", account.id, cost, 1100],
    ]);
    await waitFor(
      async () =>
        (await gateway.app.ctx.store.db.selectFrom("request_log").select("tags").where("request_id", "=", requestId).executeTakeFirst())?.tags === "env=prod,project=atlas",
      5000,
      () => "the request log never kept the tags",
    );
    const spentBefore = (await gateway.app.ctx.store.accounts.get(account.id))!.totalSpent;
    for (const header of ["project", "a=1,a=2", `k=${"v".repeat(129)}`, Array.from({ length: 11 }, (_, i) => `k${i}=v`).join(",")]) {
      const refused = await call(gateway, "POST", "/v1/chat/completions", raw, chat, { "x-gateway-tags": header });
      expect(refused.status, header).toBe(400);
      expect(refused.body.error).toMatchObject({ type: "invalid_request", param: "x-gateway-tags" });
    }
    // Anthropic's route reads the same header, in its own error shape.
    const anthropic = await call(
      gateway,
      "POST",
      "/v1/messages",
      raw,
      { model: "claude-mock", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] },
      { "x-gateway-tags": "bad" },
    );
    expect(anthropic.status).toBe(400);
    expect(JSON.stringify(anthropic.body)).toContain("x-gateway-tags");
    expect((await gateway.app.ctx.store.accounts.get(account.id))!.totalSpent).toBe(spentBefore);
  });

  it("breaks spend down by tag in /v1/usage, the admin usage API and the CSV export", async () => {
    const { raw, account } = await keyWith({ project: "atlas" });
    const sent = ["env=prod", "env=prod", "env=dev"];
    for (const tag of sent) expect((await call(gateway, "POST", "/v1/chat/completions", raw, chat, { "x-gateway-tags": tag })).status).toBe(200);
    const rows = await gateway.app.ctx.store.db.selectFrom("ledger").select("cost_nano").where("account_id", "=", account.id).where("kind", "=", "usage").execute();
    const one = BigInt(rows[0]!.cost_nano);
    const usd = formatUsd;
    const expected = [
      { tag: "project=atlas", requests: 3, cost_usd: usd(3n * one), tokens: 3300 },
      { tag: "env=prod", requests: 2, cost_usd: usd(2n * one), tokens: 2200 },
      { tag: "env=dev", requests: 1, cost_usd: usd(one), tokens: 1100 },
    ];
    const usage = await call(gateway, "GET", "/v1/usage", raw);
    expect(usage.body.by_tag).toEqual(expected);
    const admin = await call(gateway, "GET", `/admin/v1/accounts/${account.id}/usage?days=366`, adminToken); // the route counts days on the real clock, the gateway runs on a fake one
    expect(admin.status).toBe(200);
    expect(admin.body.by_tag).toEqual(expected);
    let csv = "";
    for await (const chunk of ledgerCsvLines(gateway.app.ctx.store, account.id)) csv += chunk;
    const [header, ...lines] = csv.trim().split("\r\n");
    expect(header!.split(",").at(-1)).toBe("tags");
    // The credit row that funded the account has no tags (an empty cell); the three usage rows theirs.
    expect(lines.filter((l) => l.endsWith(",")).length).toBe(1);
    expect(
      lines
        .filter((l) => !l.endsWith(","))
        .map((l) => l.split(",").slice(-2).join(","))
        .sort(),
    ).toEqual(['"env=dev', '"env=prod', '"env=prod'].map((t) => `${t},project=atlas"`).sort());
  });

  it("a budget on a tag equal to the month's spend refuses with tag_budget_exceeded; other tags and accounts are not held; the month rolls over", async () => {
    const tag = `cc=${kind}-1`;
    const alice = await keyWith({ cc: `${kind}-1` });
    const bob = await keyWith(null);
    const first = await call(gateway, "POST", "/v1/chat/completions", alice.raw, chat);
    expect(first.status).toBe(200);
    const spent = await gateway.app.ctx.store.db.selectFrom("ledger_tags").select("cost_nano").where("tag", "=", tag).executeTakeFirstOrThrow();
    const usd = (Number(spent.cost_nano) / 1e9).toFixed(9);
    // Set mid-month: the budget starts from the month's spend with the tag, which equals it.
    const set = await call(gateway, "POST", "/admin/v1/tag-budgets", adminToken, { tag, monthly_budget_usd: usd });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ tag, account_id: null, scope: `tag:${tag}`, code: "tag_budget_exceeded", remaining_usd: "0.00" });
    const refused = await call(gateway, "POST", "/v1/chat/completions", alice.raw, chat);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ type: "tag_budget_exceeded", code: "tag_budget_exceeded" });
    expect(refused.body.error?.message).toMatch(new RegExp(`the monthly budget on the tag ${tag}\\. In 2026-05 \\(UTC\\) the budget is .* USD with .* USD spent`));
    expect(refused.body.error?.message).toContain("It resets at 2026-06-01T00:00:00.000Z");
    // Bob's request carries the tag in its header: a gateway-wide budget holds every account's.
    expect((await call(gateway, "POST", "/v1/chat/completions", bob.raw, chat, { "x-gateway-tags": tag })).body.error?.code).toBe("tag_budget_exceeded");
    expect((await call(gateway, "POST", "/v1/chat/completions", bob.raw, chat, { "x-gateway-tags": "cc=other" })).status).toBe(200);
    // /v1/me lists the budget on the key's default tag.
    const me = await call(gateway, "GET", "/v1/me", alice.raw);
    expect((me.body.budgets as Array<{ level: string }>).find((b) => b.level === "tag")).toMatchObject({
      tag,
      code: "tag_budget_exceeded",
      remaining_usd: "0.00",
      resets_at: "2026-06-01T00:00:00.000Z",
    });
    // A new month: whole again, for one request of the same cost.
    clock.ms = Date.parse("2026-06-01T00:00:01Z");
    expect((await call(gateway, "POST", "/v1/chat/completions", alice.raw, chat)).status).toBe(200);
    expect((await call(gateway, "POST", "/v1/chat/completions", alice.raw, chat)).body.error?.code).toBe("tag_budget_exceeded");
    // Removed: no longer held.
    expect((await call(gateway, "DELETE", `/admin/v1/tag-budgets?tag=${encodeURIComponent(tag)}`, adminToken)).status).toBe(200);
    expect((await call(gateway, "POST", "/v1/chat/completions", alice.raw, chat)).status).toBe(200);
    const audit = await gateway.app.ctx.store.db.selectFrom("audit_log").select("action").where("target_id", "=", `tag:${tag}`).orderBy("id").execute();
    expect(audit.map((a) => a.action)).toEqual(["tag_budget.set", "tag_budget.remove"]);
  });

  it("an account's budget on a tag holds only that account; bad input is refused naming the field", async () => {
    const tag = `team=${kind}-2`;
    const carol = await keyWith(null);
    const dave = await keyWith(null);
    const set = await call(gateway, "POST", "/admin/v1/tag-budgets", adminToken, { tag, account_id: carol.account.id, monthly_token_budget: 0 });
    expect(set.status).toBe(200);
    expect((await call(gateway, "POST", "/v1/chat/completions", carol.raw, chat, { "x-gateway-tags": tag })).body.error?.code).toBe("tag_budget_exceeded");
    expect((await call(gateway, "POST", "/v1/chat/completions", dave.raw, chat, { "x-gateway-tags": tag })).status).toBe(200);
    const list = await call(gateway, "GET", "/admin/v1/tag-budgets", adminToken);
    expect((list.body.data as Array<{ scope: string }>).map((b) => b.scope)).toContain(`tag@${carol.account.id}:${tag}`);
    expect((await call(gateway, "POST", "/admin/v1/tag-budgets", adminToken, { tag: "no equals", monthly_budget_usd: "1" })).body.error?.param).toBe("tag");
    expect((await call(gateway, "POST", "/admin/v1/tag-budgets", adminToken, { tag })).status).toBe(400);
    expect((await call(gateway, "POST", "/admin/v1/tag-budgets", adminToken, { tag, account_id: "acct_nope", monthly_budget_usd: "1" })).status).toBe(400);
    expect((await call(gateway, "DELETE", `/admin/v1/tag-budgets?tag=x%3Dnone`, adminToken)).status).toBe(404);
  });

  it("the CLI sets, lists and removes a budget on a tag", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gw-tags-cli-"));
    writeFileSync(join(dir, "gateway.config.yaml"), mockConfig({ openaiUrl: mock.url }));
    const cli = async (argv: string[]) => {
      let stdout = "";
      let stderr = "";
      const code = await runCli(argv, {
        stdout: (text) => void (stdout += text),
        stderr: (text) => void (stderr += text),
        env: { ...gateway.database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml") },
        cwd: dir,
      });
      return { code, stdout, stderr };
    };
    const tag = `cli=${kind}`;
    const set = await cli(["admin", "tag-budgets", "set", tag, "--usd", "2.5", "--tokens", "1000", "--json"]);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ tag, account_id: null, usd: "2.50", tokens: 1000 });
    const listed = JSON.parse((await cli(["admin", "tag-budgets", "list", "--json"])).stdout) as Array<{ tag: string }>;
    expect(listed.map((b) => b.tag)).toContain(tag);
    expect((await cli(["admin", "tag-budgets", "remove", tag])).code).toBe(0);
    expect(await gateway.app.ctx.store.tagBudgets.get(tag, null)).toBeNull();
    expect((await cli(["admin", "tag-budgets", "set", "bad tag", "--usd", "1"])).code).toBe(1);
    expect((await cli(["admin", "tag-budgets", "set"])).code).toBe(2);
  });
});
