// The admin CLI's happy paths with --json and in text, in process, on every database kind.
import { sql } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/database.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { createHarness, USD_PATTERN, type CliHarness } from "./harness.js";

interface AccountJson {
  id: string;
  email: string;
  status: string;
  tier: string;
  is_admin: boolean;
  balance_usd: string;
  total_spent_usd: string;
  monthly_budget_usd: string | null;
}

interface KeyJson {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  status: string;
  budget_cap_usd: string | null;
  spent_usd: string;
  token_cap: number | null;
  tokens_used: number;
  revoked_at: string | null;
  key?: string;
}

interface ProviderKeyJson {
  id: string;
  account_id: string;
  provider: string;
  label: string;
  last4: string;
}

const DAY_MS = 86_400_000;

for (const kind of DATABASE_KINDS) {
  describe(`gateway CLI on ${kind}`, () => {
    let cli: CliHarness;

    beforeAll(async () => {
      cli = await createHarness(kind);
    });
    afterAll(async () => {
      await cli?.close();
    });

    it("migrate applies the migrations once, then is up to date", async () => {
      const first = await cli.json<{ database: string; applied: string[] }>(["migrate"]);
      expect(first.applied.length).toBeGreaterThan(0);
      expect(first.database).toMatch(kind === "sqlite" ? /^sqlite:/ : /^postgres:\/\//);
      if (kind === "postgres") expect(first.database).not.toContain("@");
      const again = await cli.json<{ applied: string[] }>(["migrate"]);
      expect(again.applied).toEqual([]);
      const text = await cli.run(["migrate"]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/up to date/);
    });

    it("clamping: on by default, --clamping off at creation, set-clamping on|off for accounts and keys", async () => {
      const account = await cli.json<AccountJson & { clamping: string }>(["admin", "accounts", "create", "--email", `clamp-${kind}@example.com`]);
      expect(account.clamping).toBe("on");
      const off = await cli.json<AccountJson & { clamping: string }>(["admin", "accounts", "create", "--email", `noclamp-${kind}@example.com`, "--clamping", "off"]);
      expect(off.clamping).toBe("off");
      expect((await cli.json<{ clamping: string }>(["admin", "accounts", "set-clamping", off.id, "on"])).clamping).toBe("on");
      expect((await cli.json<{ clamping: string }>(["admin", "accounts", "set-clamping", account.id, "off"])).clamping).toBe("off");
      expect((await cli.json<Array<{ id: string; clamping: string }>>(["admin", "accounts", "list"])).find((a) => a.id === account.id)?.clamping).toBe("off");

      const key = await cli.json<KeyJson & { clamping: string }>(["admin", "keys", "create", "--account", account.id, "--clamping", "off"]);
      expect(key.clamping).toBe("off");
      expect((await cli.json<{ clamping: string }>(["admin", "keys", "set-clamping", key.id, "on"])).clamping).toBe("on");
      expect((await cli.json<Array<{ id: string; clamping: string }>>(["admin", "keys", "list", "--account", account.id])).map((k) => k.clamping)).toEqual(["on"]);

      const bad = await cli.run(["admin", "keys", "set-clamping", key.id, "maybe"]);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/on or off/);
      const badCreate = await cli.run(["admin", "accounts", "create", "--email", `x-${kind}@example.com`, "--clamping", "yes"]);
      expect(badCreate.code).not.toBe(0);
      expect(badCreate.stderr).toMatch(/--clamping must be on or off/);
    });

    it("limits: --limits at key creation, set-limits JSON|none for keys and accounts, listed with --json", async () => {
      const account = await cli.json<AccountJson & { limits: unknown }>(["admin", "accounts", "create", "--email", `limits-${kind}@example.com`]);
      expect(account.limits).toBeNull();
      const key = await cli.json<KeyJson & { limits: unknown }>([
        "admin",
        "keys",
        "create",
        "--account",
        account.id,
        "--limits",
        '{"requests_per_minute":60,"models":{"m1":{"concurrent_requests":2}}}',
      ]);
      expect(key.limits).toEqual({ requests_per_minute: 60, models: { m1: { concurrent_requests: 2 } } });
      expect((await cli.json<{ limits: unknown }>(["admin", "keys", "set-limits", key.id, '{"tokens_per_minute":1000}'])).limits).toEqual({ tokens_per_minute: 1000 });
      expect((await cli.json<Array<{ id: string; limits: unknown }>>(["admin", "keys", "list", "--account", account.id])).map((k) => k.limits)).toEqual([
        { tokens_per_minute: 1000 },
      ]);
      expect((await cli.json<{ limits: unknown }>(["admin", "keys", "set-limits", key.id, "none"])).limits).toBeNull();
      expect((await cli.json<{ limits: unknown }>(["admin", "accounts", "set-limits", account.id, '{"concurrent_requests":5}'])).limits).toEqual({ concurrent_requests: 5 });
      expect((await cli.json<Array<{ id: string; limits: unknown }>>(["admin", "accounts", "list"])).find((a) => a.id === account.id)?.limits).toEqual({ concurrent_requests: 5 });

      const bad = await cli.run(["admin", "keys", "set-limits", key.id, '{"requests_per_minute":0}']);
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toMatch(/requests_per_minute/);
      const unknown = await cli.run(["admin", "accounts", "set-limits", account.id, '{"rpm":5}']);
      expect(unknown.code).not.toBe(0);
      const notJson = await cli.run(["admin", "keys", "set-limits", key.id, "sixty"]);
      expect(notJson.stderr).toMatch(/must be JSON/);
    });

    it("accounts create, list, set-status, credit and debit", async () => {
      const email = `Owner-${kind}@Example.com`;
      const created = await cli.json<AccountJson>(["admin", "accounts", "create", "--email", email, "--balance", "12.5", "--tier", "basic", "--monthly-budget", "3"]);
      expect(created).toMatchObject({
        email: email.toLowerCase(),
        status: "active",
        tier: "basic",
        is_admin: false,
        balance_usd: "12.50",
        total_spent_usd: "0.00",
        monthly_budget_usd: "3.00",
      });
      expect(created.id).toMatch(/\S/);

      const plain = await cli.json<AccountJson>(["admin", "accounts", "create", "--email", `plain-${kind}@example.com`]);
      expect(plain).toMatchObject({ tier: "standard", balance_usd: "0.00", monthly_budget_usd: null });
      expect(plain.id).not.toBe(created.id);

      const listed = await cli.json<AccountJson[]>(["admin", "accounts", "list"]);
      expect(listed.map((a) => a.id)).toEqual(expect.arrayContaining([created.id, plain.id]));
      for (const account of listed) expect(account.balance_usd).toMatch(USD_PATTERN);

      const suspended = await cli.json<AccountJson>(["admin", "accounts", "set-status", created.id, "suspended"]);
      expect(suspended.status).toBe("suspended");
      expect((await cli.json<AccountJson[]>(["admin", "accounts", "list"])).find((a) => a.id === created.id)?.status).toBe("suspended");
      expect((await cli.json<AccountJson>(["admin", "accounts", "set-status", created.id, "closed"])).status).toBe("closed");
      expect((await cli.json<AccountJson>(["admin", "accounts", "set-status", created.id, "active"])).status).toBe("active");

      expect((await cli.json<AccountJson>(["admin", "accounts", "credit", created.id, "0.000000001"])).balance_usd).toBe("12.500000001");
      expect((await cli.json<AccountJson>(["admin", "accounts", "credit", created.id, "7.499999999"])).balance_usd).toBe("20.00");
      expect((await cli.json<AccountJson>(["admin", "accounts", "debit", created.id, "20"])).balance_usd).toBe("0.00");
      expect((await cli.json<AccountJson>(["admin", "accounts", "credit", created.id, "1000000"])).balance_usd).toBe("1000000.00");
      const final = (await cli.json<AccountJson[]>(["admin", "accounts", "list"])).find((a) => a.id === created.id);
      expect(final?.balance_usd).toBe("1000000.00");
    });

    it("keys create prints the raw key once; list never shows it; revoke revokes", async () => {
      const account = await cli.json<AccountJson>(["admin", "accounts", "create", "--email", `keys-${kind}@example.com`]);
      const created = await cli.json<KeyJson>(["admin", "keys", "create", "--account", account.id, "--name", "ci", "--budget-cap", "5", "--token-cap", "1000"]);
      expect(created.key).toMatch(/^mgw_[A-Za-z0-9_-]{20,}$/);
      expect(created).toMatchObject({
        account_id: account.id,
        name: "ci",
        status: "enabled",
        budget_cap_usd: "5.00",
        spent_usd: "0.00",
        token_cap: 1000,
        tokens_used: 0,
        revoked_at: null,
      });
      const shown = created.prefix.replace(/…$/, "");
      expect(shown.length).toBeLessThan(20);
      expect(created.key?.startsWith(shown)).toBe(true);
      const uncapped = await cli.json<KeyJson>(["admin", "keys", "create", "--account", account.id]);
      expect(uncapped).toMatchObject({ budget_cap_usd: null, token_cap: null });
      expect(uncapped.key).not.toBe(created.key);

      const list = await cli.run(["admin", "keys", "list", "--account", account.id, "--json"]);
      expect(list.code).toBe(0);
      expect(list.stdout).not.toContain(created.key);
      expect(list.stdout).not.toContain(uncapped.key);
      const keys = JSON.parse(list.stdout) as KeyJson[];
      expect(keys.map((k) => k.id).sort()).toEqual([created.id, uncapped.id].sort());
      for (const key of keys) expect(key).not.toHaveProperty("key");

      const revoked = await cli.json<KeyJson>(["admin", "keys", "revoke", created.id]);
      expect(revoked.status).toBe("revoked");
      expect(revoked.revoked_at).not.toBeNull();
      const after = await cli.json<KeyJson[]>(["admin", "keys", "list", "--account", account.id]);
      expect(after.find((k) => k.id === created.id)?.status).toBe("revoked");
      expect(after.find((k) => k.id === uncapped.id)?.status).toBe("enabled");
    });

    it("provider-keys add (argument and stdin), list shows only last4, remove", async () => {
      const account = await cli.json<AccountJson>(["admin", "accounts", "create", "--email", `upstream-${kind}@example.com`]);
      const secret = `sk-test-argument-${kind}-4321`;
      const added = await cli.run(["admin", "provider-keys", "add", "--account", account.id, "--provider", "mock", "--key", secret, "--label", "main", "--json"]);
      expect(added.code).toBe(0);
      expect(added.stdout).not.toContain(secret);
      const first = JSON.parse(added.stdout) as ProviderKeyJson;
      expect(first).toMatchObject({ account_id: account.id, provider: "mock", label: "main", last4: "4321" });

      const stdinSecret = `sk-test-stdin-${kind}-9876`;
      const second = await cli.json<ProviderKeyJson>(["admin", "provider-keys", "add", "--account", account.id, "--provider", "mock", "--key", "-"], { stdin: `${stdinSecret}\n` });
      expect(second.last4).toBe("9876");

      const list = await cli.run(["admin", "provider-keys", "list", "--account", account.id, "--json"]);
      expect(list.code).toBe(0);
      expect(list.stdout).not.toContain(secret);
      expect(list.stdout).not.toContain(stdinSecret);
      const keys = JSON.parse(list.stdout) as ProviderKeyJson[];
      expect(keys.map((k) => k.last4).sort()).toEqual(["4321", "9876"]);
      const text = await cli.run(["admin", "provider-keys", "list", "--account", account.id]);
      expect(text.stdout).toContain("4321");
      expect(text.stdout).not.toContain(secret);

      expect(await cli.json(["admin", "provider-keys", "remove", first.id])).toEqual({ id: first.id, removed: true });
      const remaining = await cli.json<ProviderKeyJson[]>(["admin", "provider-keys", "list", "--account", account.id]);
      expect(remaining.map((k) => k.id)).toEqual([second.id]);
    });

    it("ledger prune deletes the old start of each chain, keeps young rows, and the chain still verifies", async () => {
      const account = await cli.json<AccountJson>(["admin", "accounts", "create", "--email", `ledger-${kind}@example.com`, "--balance", "0"]);
      const handle = await openDatabase({ databaseUrl: cli.database.databaseUrl, sqlitePath: cli.database.sqlitePath });
      try {
        const old = BigInt(Date.now() - 400 * DAY_MS);
        // An old credit, its balance with it (what `ledger verify` recomputes from the ledger).
        const insertOld = async (requestId: string) => {
          await sql`insert into ledger (created_at, account_id, request_id, kind, cost_nano) values (${old}, ${account.id}, ${requestId}, 'credit', 5)`.execute(handle.db);
          await sql`update accounts set balance_nano = balance_nano + 5 where id = ${account.id}`.execute(handle.db);
        };
        await insertOld(`req-old-${kind}`);
        await cli.json(["admin", "accounts", "credit", account.id, "2"]);
        // Old by its time but after a young row in the account's chain: kept until that one goes.
        await insertOld(`req-old-late-${kind}`);
        const pruned = await cli.json<{ deleted: number }>(["admin", "ledger", "prune", "--older-than-days", "365"]);
        expect(pruned.deleted).toBe(1);
        const rows = await handle.db.selectFrom("ledger").select(["request_id", "kind"]).where("account_id", "=", account.id).orderBy("id").execute();
        expect(rows.map((r) => r.request_id)).toEqual([expect.stringMatching(/^credit/), `req-old-late-${kind}`]);
        expect((await cli.json<{ deleted: number }>(["admin", "ledger", "prune", "--older-than-days", "365"])).deleted).toBe(0);
        // The prune that deleted rows is in the audit log, by the CLI; the one that deleted none is not.
        const audited = await handle.db.selectFrom("audit_log").select(["actor_type", "after"]).where("action", "=", "ledger.prune").execute();
        expect(audited.map((r) => [r.actor_type, JSON.parse(r.after!)])).toEqual([["cli", { older_than_days: 365, deleted: 1 }]]);
        // The remaining rows chain to the pruned row's hash, kept as the account's anchor; the balance
        // still adds up, the pruned credit carried in pruned_balance_nano.
        const verified = await cli.json<{ ok: boolean; rows: number }>(["admin", "ledger", "verify", "--account", account.id]);
        expect(verified).toMatchObject({ ok: true, rows: 2, differences: [] });
        const carried = await handle.db.selectFrom("accounts").select(["pruned_balance_nano", "balance_nano"]).where("id", "=", account.id).executeTakeFirstOrThrow();
        expect(carried).toEqual({ pruned_balance_nano: 5n, balance_nano: 2_000_000_010n });
      } finally {
        await handle.close();
      }
    });

    it("prints readable text without --json", async () => {
      const email = `text-${kind}@example.com`;
      const created = await cli.run(["admin", "accounts", "create", "--email", email, "--balance", "4.2"]);
      expect(created.code).toBe(0);
      expect(created.stdout).toMatch(/created account \S+ \(text-.*@example\.com\), balance 4\.20 USD/);

      const list = await cli.run(["admin", "accounts", "list"]);
      expect(list.code).toBe(0);
      expect(list.stdout.trimStart().startsWith("{")).toBe(false);
      expect(list.stdout.trimStart().startsWith("[")).toBe(false);
      const lines = list.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^id\s+email\s+status\s+tier\s+balance_usd/);
      const row = lines.find((line) => line.includes(email));
      expect(row).toMatch(/\bactive\b.*\bstandard\b.*\b4\.20\b/);

      const accountId = (await cli.json<AccountJson[]>(["admin", "accounts", "list"])).find((a) => a.email === email)!.id;
      const key = await cli.run(["admin", "keys", "create", "--account", accountId, "--name", "text"]);
      expect(key.code).toBe(0);
      expect(key.stdout).toMatch(new RegExp(`created key \\S+ for account ${accountId}`));
      expect(key.stdout).toMatch(/^mgw_[A-Za-z0-9_-]+$/m);
      expect(key.stdout).toMatch(/only time/);

      const keys = await cli.run(["admin", "keys", "list", "--account", accountId]);
      expect(keys.stdout.split("\n")[0]).toMatch(/^id\s+name\s+prefix\s+status/);
      expect(keys.stdout).not.toMatch(/^mgw_[A-Za-z0-9_-]{43}$/m);
    });
  });
}
