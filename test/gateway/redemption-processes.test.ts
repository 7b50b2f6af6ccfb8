// One redemption code, 20 redemptions at once through TWO gateway processes sharing one database
// (PostgreSQL, and a SQLite file): exactly one succeeds, every other gets code_not_redeemable
// (code_used), and the ledger holds exactly one credit row for the code.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseUsd } from "../../src/core/money.js";
import { openStore } from "../../src/store/index.js";
import { redemptionNote } from "../../src/store/redemption-codes-store.js";
import { killAll, startGateway as spawnGateway, waitUntilHealthy } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";

afterAll(() => killAll());

const REDEMPTIONS = 20;

for (const kind of DATABASE_KINDS) {
  describe(`redemption across two gateway processes on ${kind}`, () => {
    it("20 parallel redemptions of one code: exactly one succeeds, one ledger row", { timeout: 120_000 }, async () => {
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), "gw-redeem-"));
      const configPath = join(dir, "gateway.config.yaml");
      writeFileSync(configPath, mockConfig({ openaiUrl: "http://127.0.0.1:9" }));
      const env = { ...database.env, GATEWAY_CONFIG: configPath, LOG_LEVEL: "warn" };
      const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      try {
        // One signed-in account per redemption, so the per-account failure throttle never interferes.
        const sessions = await Promise.all(
          Array.from({ length: REDEMPTIONS }, async (_, i) => {
            const account = await store.accounts.create({ email: `redeem-${i}-${kind}@example.com`, tier: "standard" });
            const { token, session } = await store.sessions.create(account.id);
            return { accountId: account.id, cookie: `mgw_session=${token}`, csrf: session.csrfToken };
          }),
        );
        const { code, raw } = (await store.codes.mint({ value: parseUsd("25")!, count: 1, expiresAt: Date.now() + 86_400_000 }))[0]!;
        const gateways = await Promise.all([spawnGateway(dir, env), spawnGateway(dir, env)]);
        await Promise.all(gateways.map((g) => waitUntilHealthy(g)));

        const results = await Promise.all(
          sessions.map(async (s, i) => {
            const response = await fetch(`${gateways[i % 2]!.baseUrl}/dashboard/api/redeem`, {
              method: "POST",
              headers: { cookie: s.cookie, "x-csrf-token": s.csrf, "content-type": "application/json" },
              body: JSON.stringify({ code: raw }),
            });
            const body = (await response.json()) as { credited_usd?: string; error?: { type: string; code: string } };
            return { status: response.status, body, accountId: s.accountId };
          }),
        );
        const won = results.filter((r) => r.status === 200);
        expect(won).toHaveLength(1);
        expect(won[0]!.body.credited_usd).toBe("25.00");
        const lost = results.filter((r) => r.status !== 200);
        expect(lost.map((r) => [r.status, r.body.error?.type, r.body.error?.code])).toEqual(Array(REDEMPTIONS - 1).fill([400, "code_not_redeemable", "code_used"]));

        const rows = await store.db.selectFrom("ledger").select(["account_id", "cost_nano"]).where("note", "=", redemptionNote(code)).execute();
        expect(rows).toEqual([{ account_id: won[0]!.accountId, cost_nano: parseUsd("25") }]);
        expect((await store.accounts.get(won[0]!.accountId))!.balance).toBe(parseUsd("25"));
        expect((await store.codes.get(code.id))!.usedBy).toBe(won[0]!.accountId);
      } finally {
        killAll();
        await store.close();
        await database.drop();
      }
    });
  });
}
