// `gateway admin upstreams status`: every shared and account-owned upstream key, by fingerprint, with
// the breaker state, window and cooldown the gateway processes wrote; never a key itself.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import { keyFingerprint, keyScope } from "../../src/upstreams/upstream-health.js";
import { DATABASE_KINDS } from "../support/databases.js";
import { createHarness, TEST_CONFIG, type CliHarness } from "./harness.js";

const SHARED = "sk-shared-0000"; // MOCK_SHARED_KEY in the harness
const OWN = "sk-own-key-for-status-1234";

for (const kind of DATABASE_KINDS) {
  describe(`gateway admin upstreams status on ${kind}`, () => {
    let cli: CliHarness;
    let store: Store;

    beforeAll(async () => {
      cli = await createHarness(kind);
      const { databaseUrl, sqlitePath, secret } = cli.database;
      store = await openStore({ databaseUrl, sqlitePath, secret });
    });
    afterAll(async () => {
      await store?.close();
      await cli?.close();
    });

    it("lists every key by fingerprint with its breaker state, error rate, p50 and cooldown", async () => {
      const account = await cli.json<{ id: string }>(["admin", "accounts", "create", "--email", `upstreams-${kind}@example.com`]);
      const added = await cli.json<{ id: string }>(["admin", "provider-keys", "add", "--account", account.id, "--provider", "mock", "--key", OWN]);
      const now = Date.now();
      const sharedScope = keyScope(keyFingerprint("mock", SHARED));
      await store.upstreamHealth.writeState({ scope: sharedScope, state: "open", openedUntil: now + 20_000, changedAt: now });
      await store.upstreamHealth.writeWindow(sharedScope, { requests: 12, failures: 9, p50Ms: 140, statsAt: now });

      const result = await cli.run(["admin", "upstreams", "status", "--json"]);
      expect(result.code).toBe(0);
      expect(result.stdout).not.toContain(SHARED);
      expect(result.stdout).not.toContain(OWN);
      const statuses = JSON.parse(result.stdout) as { keys: Array<Record<string, unknown>>; deployments: unknown[] };
      expect(statuses.keys).toHaveLength(2);
      expect(statuses.deployments).toEqual([]);
      const [shared, own] = statuses.keys;
      expect(shared).toMatchObject({
        provider: "mock",
        account_id: null,
        account_email: null,
        upstream_key_id: null,
        fingerprint: keyFingerprint("mock", SHARED),
        state: "open",
        requests: 12,
        failures: 9,
        error_rate: 0.75,
        p50_ms: 140,
        window_at: new Date(now).toISOString(),
        state_changed_at: new Date(now).toISOString(),
      });
      expect(shared!.cooldown_seconds).toBeGreaterThanOrEqual(19);
      expect(shared!.cooldown_seconds).toBeLessThanOrEqual(20);
      expect(own).toMatchObject({
        provider: "mock",
        account_id: account.id,
        account_email: `upstreams-${kind}@example.com`,
        upstream_key_id: added.id,
        fingerprint: keyFingerprint("mock", OWN),
        state: "closed",
        cooldown_seconds: 0,
        requests: 0,
        error_rate: null,
        p50_ms: null,
      });
      expect(keyFingerprint("mock", OWN)).toMatch(/^[0-9a-f]{12}$/);

      // Past its open period the breaker is half-open: the next request is a trial.
      await store.upstreamHealth.writeState({ scope: sharedScope, state: "open", openedUntil: now - 1, changedAt: now + 1 });
      const later = await cli.json<{ keys: Array<{ state: string; cooldown_seconds: number }> }>(["admin", "upstreams", "status"]);
      expect(later.keys[0]).toMatchObject({ state: "half_open", cooldown_seconds: 0 });

      const text = await cli.run(["admin", "upstreams", "status"]);
      expect(text.stdout).toContain(keyFingerprint("mock", SHARED));
      expect(text.stdout).toContain("half_open");
      expect(text.stdout).toContain("75% of 12");
      expect(text.stdout).toContain(`upstreams-${kind}@example.com`);
    });

    it("lists each routing-group deployment's breaker by model and name", async () => {
      const grouped = await createHarness(
        kind,
        TEST_CONFIG.replace(
          "tiers:",
          "  - id: grouped\n    kind: chat\n    deployments:\n      - { name: primary, provider: mock }\n      - { name: spare, provider: mock, priority: 1 }\ntiers:",
        ),
      );
      try {
        const now = Date.now();
        const { databaseUrl, sqlitePath, secret } = grouped.database;
        const groupedStore = await openStore({ databaseUrl, sqlitePath, secret });
        await groupedStore.upstreamHealth.writeState({ scope: "deployment:grouped/primary", state: "open", openedUntil: now + 20_000, changedAt: now });
        await groupedStore.close();
        const statuses = await grouped.json<{ keys: unknown[]; deployments: Array<Record<string, unknown>> }>(["admin", "upstreams", "status", "--json"]);
        expect(statuses.keys).toHaveLength(1);
        expect(statuses.deployments.map((s) => s.deployment)).toEqual(["grouped/primary", "grouped/spare"]);
        expect(statuses.deployments[0]).toMatchObject({ provider: "mock", state: "open" });
        expect(statuses.deployments[1]).toMatchObject({ provider: "mock", state: "closed" });
        expect((await grouped.run(["admin", "upstreams", "status"])).stdout).toContain("deployment grouped/primary");
      } finally {
        await grouped.close();
      }
    });

    it("refuses an unknown subcommand", async () => {
      const result = await cli.run(["admin", "upstreams", "list"]);
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/upstreams status/);
    });
  });
}
