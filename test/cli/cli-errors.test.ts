// The admin CLI's bad-input paths: a non-zero exit, nothing on stdout, exactly one line on stderr
// naming the problem, and no change to the database.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { createHarness, TEST_CONFIG, type CliHarness } from "./harness.js";

interface AccountJson {
  id: string;
  email: string;
  status: string;
  balance_usd: string;
}

for (const kind of DATABASE_KINDS) {
  describe(`gateway CLI bad input on ${kind}`, () => {
    let cli: CliHarness;
    let account: AccountJson;

    beforeAll(async () => {
      cli = await createHarness(kind);
      account = await cli.json<AccountJson>(["admin", "accounts", "create", "--email", `base-${kind}@example.com`, "--balance", "10"]);
    });
    afterAll(async () => {
      await cli?.close();
    });

    /** Runs a command that must fail and returns its one stderr line. */
    async function fails(argv: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<string> {
      for (const args of [argv, [...argv, "--json"]]) {
        const result = await cli.run(args, options);
        expect(result.code, `gateway ${args.join(" ")}`).not.toBe(0);
        expect(result.stdout).toBe("");
        expect(result.errLines, result.stderr).toHaveLength(1);
        expect(result.stderr.endsWith("\n")).toBe(true);
      }
      return (await cli.run(argv, options)).errLines[0]!;
    }

    async function accounts(): Promise<AccountJson[]> {
      return cli.json<AccountJson[]>(["admin", "accounts", "list"]);
    }

    it("unknown options, missing and malformed arguments of accounts create", async () => {
      const before = await accounts();
      expect(await fails(["admin", "accounts", "create", "--email", "x@example.com", "--bogus"])).toMatch(/unknown option --bogus$/);
      expect(await fails(["admin", "accounts", "create"])).toMatch(/--email is required/);
      expect(await fails(["admin", "accounts", "create", "--email", "not-an-email"])).toMatch(/--email.*not-an-email.*not an email/);
      expect(await fails(["admin", "accounts", "create", "--email", "x@example.com", "--balance", "ten"])).toMatch(/--balance.*"ten"/);
      expect(await fails(["admin", "accounts", "create", "--email", "x@example.com", "--balance", "1.0000000001"])).toMatch(/--balance.*"1\.0000000001"/);
      expect(await fails(["admin", "accounts", "create", "--email", "x@example.com", "--balance", "1000000.01"])).toMatch(/balance_invariant/);
      expect(await fails(["admin", "accounts", "create", "--email", "x@example.com", "--monthly-budget", "lots"])).toMatch(/--monthly-budget/);
      expect(await fails(["admin", "accounts", "create", "--email", "x@example.com", "--tier", "platinum"])).toMatch(/unknown tier "platinum"/);
      expect(await fails(["admin", "accounts", "create", "--email", account.email])).toMatch(/already exists/);
      expect(await fails(["admin", "accounts", "create", "--email", "x@example.com", "stray"])).toMatch(/stray/);
      expect(await accounts()).toEqual(before);
    });

    it("serve refuses a --workers that is not a whole number from 1 to 256, before starting anything", async () => {
      for (const workers of ["0", "257", "-1", "1.5", "two", "", "99999"]) {
        expect(await fails(["serve", `--workers=${workers}`]), workers).toMatch(/^gateway: --workers must be a whole number from 1 to 256$/);
      }
      expect(await fails(["serve", "--workers"])).toMatch(/--workers/);
    });

    it("set-status, credit and debit refuse bad input and leave the record unchanged", async () => {
      expect(await fails(["admin", "accounts", "set-status", account.id, "frozen"])).toMatch(/STATUS.*"frozen"/);
      expect(await fails(["admin", "accounts", "set-status", account.id])).toMatch(/expected ID STATUS/);
      expect(await fails(["admin", "accounts", "set-status", "acct_missing", "active"])).toMatch(/account_not_found/);
      expect(await fails(["admin", "accounts", "credit", "acct_missing", "5"])).toMatch(/account_not_found/);
      expect(await fails(["admin", "accounts", "credit", account.id, "five"])).toMatch(/USD.*"five"/);
      expect(await fails(["admin", "accounts", "credit", account.id, "0"])).toMatch(/positive/);
      expect(await fails(["admin", "accounts", "credit", account.id, "-5"])).toMatch(/unknown option -5/);
      expect(await fails(["admin", "accounts", "debit", account.id, "--", "-5"])).toMatch(/USD.*"-5"/);
      expect(await fails(["admin", "accounts", "credit", account.id, "999999"])).toMatch(/balance_invariant/);
      expect(await fails(["admin", "accounts", "debit", account.id, "10.000000001"])).toMatch(/balance_invariant/);
      const after = (await accounts()).find((a) => a.id === account.id);
      expect(after).toMatchObject({ status: "active", balance_usd: "10.00" });
    });

    it("keys commands name the problem", async () => {
      expect(await fails(["admin", "keys", "create"])).toMatch(/--account is required/);
      expect(await fails(["admin", "keys", "create", "--account", "acct_missing"])).toMatch(/account_not_found/);
      expect(await fails(["admin", "keys", "create", "--account", account.id, "--budget-cap", "-1"])).toMatch(/--budget-cap needs a value/);
      expect(await fails(["admin", "keys", "create", "--account", account.id, "--budget-cap=-1"])).toMatch(/--budget-cap.*"-1"/);
      expect(await fails(["admin", "keys", "create", "--account", account.id, "--token-cap", "many"])).toMatch(/--token-cap.*"many"/);
      expect(await fails(["admin", "keys", "list"])).toMatch(/--account is required/);
      expect(await fails(["admin", "keys", "list", "--account", "acct_missing"])).toMatch(/account_not_found/);
      expect(await fails(["admin", "keys", "revoke", "key_missing"])).toMatch(/not_found.*key_missing/);
      expect(await fails(["admin", "keys", "rotate"])).toMatch(/usage: gateway admin keys/);
      expect(await cli.json<unknown[]>(["admin", "keys", "list", "--account", account.id])).toEqual([]);
    });

    it("provider-keys commands name the problem", async () => {
      expect(await fails(["admin", "provider-keys", "add", "--account", account.id, "--provider", "acme", "--key", "sk-0123456789"])).toMatch(/unknown provider "acme"/);
      expect(await fails(["admin", "provider-keys", "add", "--account", account.id, "--provider", "mock"])).toMatch(/--key is required/);
      expect(await fails(["admin", "provider-keys", "add", "--account", "acct_missing", "--provider", "mock", "--key", "sk-0123456789"])).toMatch(/account_not_found/);
      expect(await fails(["admin", "provider-keys", "add", "--account", account.id, "--provider", "mock", "--key", "-"], { stdin: "\n" })).toMatch(/key/);
      expect(await fails(["admin", "provider-keys", "list", "--account", "acct_missing"])).toMatch(/account_not_found/);
      expect(await fails(["admin", "provider-keys", "remove", "upk_missing"])).toMatch(/not_found.*upk_missing/);
      expect(await cli.json<unknown[]>(["admin", "provider-keys", "list", "--account", account.id])).toEqual([]);
    });

    it("ledger prune refuses anything younger than 365 days", async () => {
      expect(await fails(["admin", "ledger", "prune", "--older-than-days", "30"])).toMatch(/ledger_retention_violation/);
      expect(await fails(["admin", "ledger", "prune", "--older-than-days", "364"])).toMatch(/ledger_retention_violation/);
      expect(await fails(["admin", "ledger", "prune", "--older-than-days", "a year"])).toMatch(/--older-than-days.*"a year"/);
      expect(await fails(["admin", "ledger", "prune"])).toMatch(/--older-than-days is required/);
    });

    it("unknown commands and groups", async () => {
      expect(await fails(["frobnicate"])).toMatch(/unknown command "frobnicate"/);
      expect(await fails(["admin", "widgets", "list"])).toMatch(/usage: gateway admin/);
      expect(await fails(["admin", "accounts", "delete", account.id])).toMatch(/usage: gateway admin accounts/);
      expect(await fails(["migrate", "--force"])).toMatch(/unknown option.*--force/i);
    });

    it("a bad config file stops every command with a message naming the file and the field", async () => {
      const cases: Array<{ text: string; field: RegExp }> = [
        { text: TEST_CONFIG.replace("kind: chat", "kind: audio"), field: /models\[0\]\.kind/ },
        { text: TEST_CONFIG.replace("basic: { models: [mock-chat] }", "basic: { models: [missing-model] }"), field: /tiers\.basic\.models.*missing-model/ },
        { text: TEST_CONFIG.replace("base_url: http://127.0.0.1:9/v1", "base_url: not a url"), field: /providers\.mock\.base_url/ },
        { text: TEST_CONFIG.replace("MOCK_SHARED_KEY", "UNSET_VARIABLE_FOR_TEST"), field: /providers\.mock\.keys\[0\].*UNSET_VARIABLE_FOR_TEST/ },
        { text: "providers: [1, 2", field: /not valid YAML/ },
      ];
      for (const [i, { text, field }] of cases.entries()) {
        const path = join(cli.cwd, `bad-${i}.yaml`);
        writeFileSync(path, text);
        for (const argv of [["migrate"], ["admin", "accounts", "list"]]) {
          const line = await fails(argv, { env: { GATEWAY_CONFIG: path } });
          expect(line).toContain(path);
          expect(line).toMatch(field);
        }
      }
      const missing = join(cli.cwd, "no-such.yaml");
      expect(await fails(["migrate"], { env: { GATEWAY_CONFIG: missing } })).toMatch(/no-such\.yaml.*not found/);
    });
  });
}
