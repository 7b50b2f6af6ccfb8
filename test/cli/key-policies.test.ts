// Key policies through the admin CLI (ADR 0017): set at `keys create` and by `keys set-policy`,
// validated with a message naming the field and nothing changed, and listed with --json (the
// periodic budget's use and reset, and `expired` for a key past its expiry, stored status kept).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DATABASE_KINDS } from "../support/databases.js";
import { createHarness, type CliHarness } from "./harness.js";

interface KeyJson {
  id: string;
  status: string;
  effective_status: string;
  policy: {
    allowed_models: string[] | null;
    allowed_networks: string[] | null;
    expires_at: string | null;
    expired: boolean;
    periodic_budget: null | { period: string; budget_usd: string | null; token_cap: number | null; spent_usd: string; tokens_used: number; resets_at: string };
  };
}

for (const kind of DATABASE_KINDS) {
  describe(`CLI key policies on ${kind}`, () => {
    let cli: CliHarness;
    let accountId: string;

    beforeAll(async () => {
      cli = await createHarness(kind);
      accountId = (await cli.json<{ id: string }>(["admin", "accounts", "create", "--email", `policies-${kind}@example.com`])).id;
    });
    afterAll(async () => {
      await cli?.close();
    });

    it("keys create takes every policy option and list --json shows them", async () => {
      const created = await cli.json<KeyJson>([
        "admin",
        "keys",
        "create",
        "--account",
        accountId,
        "--models",
        "mock-chat",
        "--networks",
        "10.0.0.0/8,::1",
        "--expires",
        "2099-01-01T00:00:00Z",
        "--period",
        "month",
        "--period-budget",
        "2.50",
        "--period-token-cap",
        "5000",
      ]);
      expect(created.policy).toMatchObject({
        allowed_models: ["mock-chat"],
        allowed_networks: ["10.0.0.0/8", "::1/128"],
        expires_at: "2099-01-01T00:00:00.000Z",
        expired: false,
        periodic_budget: { period: "month", budget_usd: "2.50", token_cap: 5000, spent_usd: "0.00", tokens_used: 0 },
      });
      const listed = (await cli.json<KeyJson[]>(["admin", "keys", "list", "--account", accountId])).find((k) => k.id === created.id);
      expect(listed?.policy).toEqual(created.policy);
    });

    it("set-policy changes and removes; an expired key lists as expired with its status kept", async () => {
      const created = await cli.json<KeyJson>(["admin", "keys", "create", "--account", accountId]);
      const past = await cli.json<KeyJson>(["admin", "keys", "set-policy", created.id, "--expires", "2020-01-01T00:00:00Z", "--models", "mock-chat"]);
      expect(past).toMatchObject({ status: "enabled", effective_status: "expired", policy: { expired: true, allowed_models: ["mock-chat"] } });
      const text = await cli.run(["admin", "keys", "list", "--account", accountId]);
      expect(text.stdout).toMatch(new RegExp(`${created.id}\\s.*expired`));
      const lifted = await cli.json<KeyJson>(["admin", "keys", "set-policy", created.id, "--expires", "none", "--models", "none"]);
      expect(lifted).toMatchObject({ effective_status: "enabled", policy: { expires_at: null, allowed_models: null } });
    });

    it("invalid options fail with a message naming the field and change nothing", async () => {
      const created = await cli.json<KeyJson>(["admin", "keys", "create", "--account", accountId, "--networks", "10.0.0.0/8"]);
      const cases: Array<[string[], RegExp]> = [
        [["--models", "no-such-model"], /allowed_models: the model no-such-model does not exist/],
        [["--networks", "10.0.0.0/40"], /allowed_networks/],
        [["--expires", "soon"], /--expires/],
        [["--period", "fortnight"], /--period must be day, week, month or none/],
        [["--period", "day"], /period: a period needs/],
        [["--period-budget", "1"], /period: a periodic budget needs its period/],
        [["--period", "day", "--period-budget", "-1"], /--period-budget/],
        [[], /give at least one of/],
      ];
      for (const [options, message] of cases) {
        const result = await cli.run(["admin", "keys", "set-policy", created.id, ...options]);
        expect(result.code, options.join(" ")).not.toBe(0);
        expect(result.stderr, options.join(" ")).toMatch(message);
      }
      const refusedCreate = await cli.run(["admin", "keys", "create", "--account", accountId, "--models", "nope"]);
      expect(refusedCreate.code).not.toBe(0);
      const listed = (await cli.json<KeyJson[]>(["admin", "keys", "list", "--account", accountId])).find((k) => k.id === created.id);
      expect(listed?.policy).toMatchObject({ allowed_networks: ["10.0.0.0/8"], allowed_models: null, periodic_budget: null });
    });
  });
}
