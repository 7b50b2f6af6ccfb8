// Two processes on one SQLite file: a store transaction that reads and then writes cannot take the
// write lock once the other has committed since its read (SQLITE_BUSY_SNAPSHOT, whatever the busy
// timeout). `transact` runs it again; before, an admin change made while a gateway was writing
// (`gateway admin keys ...` next to `serve`, or two gateways) failed with "database is locked".
// Two connections to one file stand for the two processes.
import { afterEach, describe, expect, it } from "vitest";
import { openStore, type Store } from "../../src/store/index.js";
import { transact } from "../../src/store/transact.js";
import { createTestDatabase, type TestDatabase } from "../support/databases.js";

let database: TestDatabase | undefined;
const stores: Store[] = [];

afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  await database?.drop();
  database = undefined;
});

async function twoConnections(): Promise<[Store, Store]> {
  database = await createTestDatabase("sqlite");
  for (let i = 0; i < 2; i++) {
    stores.push(await openStore({ databaseUrl: null, sqlitePath: database.sqlitePath, secret: database.secret }));
  }
  return [stores[0]!, stores[1]!];
}

describe("store transactions on SQLite with another process writing", () => {
  it("a read-then-write transaction overtaken by another's commit is run again, not failed", async () => {
    const [ours, theirs] = await twoConnections();
    const account = await ours.accounts.create({ email: "busy@example.com", tier: "standard", balance: 0n });
    let attempts = 0;
    const tier = await transact(ours.db, async (trx) => {
      attempts += 1;
      const row = await trx.selectFrom("accounts").select("tier").where("id", "=", account.id).executeTakeFirstOrThrow();
      // The other process commits between our read and our write, on the first attempt only.
      if (attempts === 1) await theirs.accounts.create({ email: "other@example.com", tier: "standard", balance: 0n });
      await trx
        .updateTable("accounts")
        .set({ tier: `${row.tier}-changed` })
        .where("id", "=", account.id)
        .execute();
      return `${row.tier}-changed`;
    });
    expect(attempts).toBe(2);
    expect(tier).toBe("standard-changed");
    expect((await theirs.accounts.get(account.id))?.tier).toBe("standard-changed");
  });

  it("an audited admin change (a key's limits) succeeds while another process commits during it", async () => {
    const [ours, theirs] = await twoConnections();
    const account = await ours.accounts.create({ email: "limits@example.com", tier: "standard", balance: 0n });
    const key = await ours.keys.create({ accountId: account.id });
    let attempts = 0;
    await ours.audited({ type: "cli", id: null, name: "test", clientAddress: null, requestId: null }, async (tx) => {
      attempts += 1;
      await tx.trx.selectFrom("keys").select("id").where("id", "=", key.key.id).executeTakeFirstOrThrow();
      if (attempts === 1) await theirs.accounts.create({ email: "writer@example.com", tier: "standard", balance: 0n });
      return tx.keys.setLimits(key.key.id, { requests_per_minute: 7 });
    });
    expect(attempts).toBe(2);
    expect((await theirs.keys.get(key.key.id))?.limits).toMatchObject({ requestsPerMinute: 7 });
  });

  it("gives up after its attempts when the lock never comes, with SQLITE_BUSY", async () => {
    const [ours, theirs] = await twoConnections();
    const account = await ours.accounts.create({ email: "stuck@example.com", tier: "standard", balance: 0n });
    let attempts = 0;
    const failed = transact(ours.db, async (trx) => {
      attempts += 1;
      await trx.selectFrom("accounts").select("tier").where("id", "=", account.id).executeTakeFirstOrThrow();
      await theirs.accounts.create({ email: `again-${attempts}@example.com`, tier: "standard", balance: 0n });
      await trx.updateTable("accounts").set({ tier: "never" }).where("id", "=", account.id).execute();
    });
    await expect(failed).rejects.toMatchObject({ code: expect.stringMatching(/^SQLITE_BUSY/) });
    expect(attempts).toBe(25);
    expect((await ours.accounts.get(account.id))?.tier).toBe("standard");
  });
});
