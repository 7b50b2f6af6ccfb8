// One Stripe event delivered 20 times at once, split across TWO gateway processes sharing one
// PostgreSQL (and a SQLite file): every delivery answers 200, exactly one credits, and the ledger and
// the balance hold that one credit; the event has one row and one audit row.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { killAll, startGateway as spawnGateway, waitUntilHealthy } from "../cli/gateway-process.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { checkoutCompleted, deliver, stripeConfigSection } from "../support/mock-stripe.js";

afterAll(() => killAll());

const DELIVERIES = 20;
const SECRET = "whsec_two_processes_0001";

for (const kind of DATABASE_KINDS) {
  describe(`one Stripe event across two gateway processes on ${kind}`, () => {
    it("20 concurrent deliveries of one event: one credit in the ledger and the balance", { timeout: 120_000 }, async () => {
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), "gw-stripe-"));
      const configPath = join(dir, "gateway.config.yaml");
      // No Checkout is created here: the API address is never called.
      writeFileSync(configPath, mockConfig({ openaiUrl: "http://127.0.0.1:9", extra: stripeConfigSection("http://127.0.0.1:9", SECRET) }));
      const env = { ...database.env, GATEWAY_CONFIG: configPath, LOG_LEVEL: "warn" };
      const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      try {
        const account = await store.accounts.create({ email: `stripe-${kind}@example.com`, tier: "standard" });
        const gateways = await Promise.all([spawnGateway(dir, env), spawnGateway(dir, env)]);
        await Promise.all(gateways.map((g) => waitUntilHealthy(g)));
        const event = checkoutCompleted({
          eventId: `evt_concurrent_${kind}`,
          sessionId: `cs_concurrent_${kind}`,
          accountId: account.id,
          cents: 2500,
          paymentIntent: `pi_concurrent_${kind}`,
        });

        const results = await Promise.all(Array.from({ length: DELIVERIES }, (_, i) => deliver(gateways[i % 2]!.baseUrl, event, SECRET)));
        expect(results.map((r) => r.status)).toEqual(Array(DELIVERIES).fill(200));
        expect(results.filter((r) => r.body.duplicate === false)).toHaveLength(1);
        expect(results.every((r) => r.body.status === "credited")).toBe(true);

        const credits = await store.db.selectFrom("ledger").select(["kind", "cost_nano"]).where("account_id", "=", account.id).execute();
        expect(credits).toEqual([{ kind: "credit", cost_nano: 25_000_000_000n }]);
        expect((await store.accounts.get(account.id))!.balance).toBe(25_000_000_000n);
        expect(await store.db.selectFrom("stripe_events").select("id").execute()).toEqual([{ id: event.id }]);
        expect(await store.audit.list({ targetType: "stripe_event", limit: 50 })).toHaveLength(1);
      } finally {
        killAll();
        await store.close();
        await database.drop();
      }
    });
  });
}
