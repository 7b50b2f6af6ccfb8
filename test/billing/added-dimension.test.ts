// The recipe of CONTRIBUTING.md, "Adding a billing dimension", on a copy of the dimension list with one
// entry added: audio input tokens, a part of the input priced per million tokens. Nothing but the entry
// tells pricing, usage normalisation, the hold and the reports about it; with the recipe's one
// migration (audio-input-migration.ts, built with dimension-sql.ts's builders and applied after the
// gateway's migrations), admission, settlement, the ledger's hash chain, the usage rollup and the
// query behind /v1/usage carry it on SQLite and on PostgreSQL (gw_batch). The list is injected where
// the database is opened (openStore's `dimensions`); the gateway's own list is not touched.
import { sql, type Kysely } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeUsage, StoreBilling } from "../../src/billing/billing-store.js";
import { dimensionCounts, priceBreakdown, projectCost } from "../../src/billing/pricing.js";
import { foldKeyUsage, keyUsageQuery } from "../../src/billing/usage-queries.js";
import { addSums, emptyTotals, summedColumns, usageTotalsJson } from "../../src/billing/usage-report.js";
import type { ModelConfig } from "../../src/core/catalog.js";
import { DIMENSIONS, dimensionSet, type DimensionSpec } from "../../src/core/dimensions.js";
import { plausibleUsage, type Usage } from "../../src/core/usage.js";
import { rollupOfLedgerSql } from "../../src/store/dimension-sql.js";
import { openStore, type Store } from "../../src/store/index.js";
import { LEDGER_CHAIN_COLUMNS, ledgerChainColumns, ledgerRowHash } from "../../src/store/ledger-chain.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import * as audioInputMigration from "./audio-input-migration.js";
import { admission, chatModel, Clock, makeAccount, makeKey, MODEL, rollupSummedColumns, usage } from "./support.js";

/** The one entry: audio input tokens at $40 per million (gpt-4o's audio input price). */
export const AUDIO_INPUT = {
  name: "audio_input",
  unit: "token",
  part: "input",
  counts: "tokens",
  priceKey: "audio_input_per_mtok",
  priceDefault: "input_per_mtok",
  priceField: "audioInputPerMtok",
  usageField: "audioInputTokens",
  countColumn: "audio_input_tokens",
  costColumn: "audio_input_cost_nano",
  tiered: true,
  cache: null,
} as const satisfies DimensionSpec;

export const WITH_AUDIO = dimensionSet([...DIMENSIONS, AUDIO_INPUT]);

/** MODEL ($2.50 input, $1.25 cached, $10 output per Mtok) with the audio price. */
export const AUDIO_MODEL: ModelConfig = chatModel({ id: "mock-audio", pricing: Object.assign({ audioInputPerMtok: 40_000_000_000n }, MODEL.pricing) });

/** A usage with `audio` of its input tokens being audio (a field the Usage type does not name). */
export function audioUsage(input: number, output: number, audio: number, extra: Partial<Usage> = {}): Usage {
  return Object.assign(usage(input, output, extra), { audioInputTokens: audio });
}

describe("an added input dimension, without a database", () => {
  it("is priced in the one rounding of the token part, and its share is part of the cost", () => {
    // 1,000 input of which 200 cached and 300 audio: 500 plain. 500 x 2.50 + 200 x 1.25 + 300 x 40 + 500 x 10
    // = 1,250 + 250 + 12,000 + 5,000 = 18,500 USD per 1e6 tokens = 18,500,000 nano.
    const b = priceBreakdown(AUDIO_MODEL, audioUsage(1000, 500, 300, { cachedInputTokens: 200 }), undefined, WITH_AUDIO);
    expect(b.cost).toBe(18_500_000n);
    expect(b.counts).toMatchObject({ input: 500n, cached_input: 200n, audio_input: 300n, output: 500n, request: 1n });
    expect(b.costs).toMatchObject({ input: 1_250_000n, cached_input: 250_000n, audio_input: 12_000_000n, output: 5_000_000n });
    expect(Object.values(b.costs).reduce((sum, cost) => sum + cost, 0n)).toBe(b.cost);
    // The same usage priced by the gateway's own list: audio tokens are plain input there.
    expect(priceBreakdown(AUDIO_MODEL, audioUsage(1000, 500, 300, { cachedInputTokens: 200 })).cost).toBe(7_250_000n);
  });

  it("is capped within the input after the shares before it in the list", () => {
    expect(dimensionCounts(audioUsage(100, 0, 80, { cachedInputTokens: 60 }), WITH_AUDIO)).toMatchObject({ cached_input: 60n, audio_input: 40n, input: 0n });
    expect(normalizeUsage(audioUsage(100.5, 1, 80.2, { cachedInputTokens: 60 }), WITH_AUDIO)).toMatchObject({ inputTokens: 101, cachedInputTokens: 60, audioInputTokens: 41 });
    expect(plausibleUsage(audioUsage(100, 1, -1), WITH_AUDIO)).toBeNull();
    expect(plausibleUsage(audioUsage(100, 1, 1), WITH_AUDIO)).not.toBeNull();
  });

  it("raises the hold: projected input is held at the dearest input-side price, now the audio price", () => {
    // 1,000 x 40 + 500 x 10 = 45,000 USD per 1e6 tokens.
    expect(projectCost({ ...admission("a", "k", 1000, 500), model: AUDIO_MODEL }, WITH_AUDIO)).toBe(45_000_000n);
    expect(projectCost({ ...admission("a", "k", 1000, 500), model: AUDIO_MODEL })).toBe(7_500_000n);
  });

  it("is reported with its count and cost; the input counts what is neither cache nor audio", () => {
    const totals = emptyTotals(WITH_AUDIO);
    const row = {
      requests: 2n,
      input_tokens: 1000n,
      cached_tokens: 200n,
      output_tokens: 500n,
      audio_input_tokens: 300n,
      audio_input_cost_nano: 12_000_000n,
      cost_nano: 18_500_000n,
    };
    addSums(totals, row, WITH_AUDIO);
    const json = usageTotalsJson(totals, WITH_AUDIO);
    expect(json.dimensions.audio_input).toEqual({ tokens: 300, cost_usd: "0.012" });
    expect(json.dimensions.input).toEqual({ tokens: 500, cost_usd: "0.00" });
    expect(json.dimensions.request).toEqual({ requests: 2, cost_usd: "0.00" });
  });
});

const USD = 1_000_000_000n;
const HOUR = 3_600_000;
const START = Date.UTC(2026, 4, 10, 9, 17, 3);
const plain = (rows: unknown[]) => JSON.parse(JSON.stringify(rows, (_k, v: unknown) => (typeof v === "bigint" || typeof v === "number" ? String(v) : v))) as unknown[];
const ORDER = "order by key_id, hour, account_id, model, provider";

for (const kind of DATABASE_KINDS) {
  describe(`an added input dimension, end to end, on ${kind}`, () => {
    const clock = new Clock(START);
    let database: TestDatabase;
    let store: Store;
    let billing: StoreBilling;
    let accountId: string;
    let keyId: string;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: "test-secret-0123456789", dimensions: WITH_AUDIO.list });
      // The recipe's migration, after the gateway's own, in one transaction as the migrator runs it.
      await store.db.transaction().execute((trx) => audioInputMigration.up(trx as unknown as Kysely<unknown>, store.dialect));
      billing = new StoreBilling(store.handle, { now: clock.now });
      accountId = await makeAccount(store, { balance: 100n * USD });
      keyId = await makeKey(store, accountId);
    });
    afterAll(async () => {
      await billing?.stopSweeper();
      await store?.close();
      await database?.drop();
    });

    it("the migration adds the columns to the ledger and to the rollup", async () => {
      expect(await rollupSummedColumns(store)).toEqual([...summedColumns(WITH_AUDIO)].sort());
      const ledger = (await store.db.introspection.getTables()).find((t) => t.name === "ledger")!;
      expect(ledger.columns.map((c) => c.name)).toEqual(expect.arrayContaining(["audio_input_tokens", "audio_input_cost_nano"]));
    });

    it("admission holds the audio price; settlement records the audio tokens and their share of the cost", async () => {
      const hold = await billing.admit({ ...admission(accountId, keyId, 1000, 500), model: AUDIO_MODEL });
      expect(hold.amount).toBe(45_000_000n);
      const charge = await billing.settle(hold, audioUsage(1000, 500, 300, { cachedInputTokens: 200 }), "mock");
      expect(charge).toEqual({ cost: 18_500_000n, recorded: true });
      const row = (await store.db.selectFrom("ledger").selectAll().where("request_id", "=", hold.requestId).executeTakeFirstOrThrow()) as unknown as Record<string, unknown>;
      expect(row).toMatchObject({ input_tokens: 1000n, cached_tokens: 200n, audio_input_tokens: 300n, audio_input_cost_nano: 12_000_000n, input_cost_nano: 1_250_000n });
      expect(WITH_AUDIO.list.reduce((sum, d) => sum + (row[d.costColumn] as bigint), 0n)).toBe(18_500_000n);
      const account = await store.db.selectFrom("accounts").select(["balance_nano", "held_nano"]).where("id", "=", accountId).executeTakeFirstOrThrow();
      expect(account).toEqual({ balance_nano: 100n * USD - 18_500_000n, held_nano: 0n });
      // A replay is recognised and charges nothing more.
      expect(await billing.settle(hold, audioUsage(1000, 500, 300, { cachedInputTokens: 200 }), "mock")).toEqual({ cost: 18_500_000n, recorded: false });
    });

    it("the ledger's hash chain covers the audio columns and verifies", async () => {
      // Two more settlements an hour apart and a credit (hashed by the database's trigger on both databases).
      for (const audio of [100, 40]) {
        clock.advance(HOUR);
        await billing.settle(await billing.admit({ ...admission(accountId, keyId, 500, 100), model: AUDIO_MODEL }), audioUsage(500, 100, audio), "mock");
      }
      // A usage row written by hand (no key): hashed by the chain trigger the recipe's migration re-created.
      await sql`insert into ledger (created_at, account_id, request_id, kind, model, input_tokens, cached_tokens, output_tokens, reasoning_tokens,
          cost_nano, estimated, audio_input_tokens, audio_input_cost_nano, input_cost_nano)
        values (${BigInt(clock.now())}, ${accountId}, 'req_audio_by_hand', 'usage', 'mock-audio', 7, 0, 0, 0, 280000, 0, 7, 280000, 0)`.execute(store.db);
      await store.accounts.adjustBalance(accountId, 5n * USD, "top-up after audio");
      expect(await store.ledger.verify()).toMatchObject({ broken: null });
      const rows = (await store.db.selectFrom("ledger").selectAll().where("account_id", "=", accountId).orderBy("id").execute()) as unknown as Array<
        Record<string, unknown> & { hash: string }
      >;
      expect(rows.map((r) => r.kind)).toEqual(["credit", "usage", "usage", "usage", "usage", "credit"]);
      const chained = ledgerChainColumns(WITH_AUDIO);
      // Settlement's own hash (SQLite) or gw_batch's insert (PostgreSQL), and the trigger's for the row by hand.
      expect(rows[1]!.hash).toBe(ledgerRowHash(rows[0]!.hash, rows[1]!, chained));
      expect(rows[4]!.hash).toBe(ledgerRowHash(rows[3]!.hash, rows[4]!, chained));
      // Hashed without the audio columns, the rows would not verify: they are part of the encoding.
      expect(rows[1]!.hash).not.toBe(ledgerRowHash(rows[0]!.hash, rows[1]!, LEDGER_CHAIN_COLUMNS));
      expect(rows[4]!.hash).not.toBe(ledgerRowHash(rows[3]!.hash, rows[4]!, LEDGER_CHAIN_COLUMNS));
    });

    it("usage_hourly stays equal to the ledger's sums, audio columns included", async () => {
      const columns = summedColumns(WITH_AUDIO);
      const rollup = plain((await sql.raw(`select * from usage_hourly ${ORDER}`).execute(store.db)).rows);
      expect(rollup).toEqual(plain((await sql.raw(`select * from (${rollupOfLedgerSql(columns)}) r ${ORDER}`).execute(store.db)).rows));
      expect(rollup).toEqual(expect.arrayContaining([expect.objectContaining({ audio_input_tokens: "300", audio_input_cost_nano: "12000000" })]));
    });

    it("the query behind /v1/usage reports the audio dimension, from the rollup and the ledger's edges alike", async () => {
      // From a second after the first settlement: its hour is an edge read from the ledger, the next a whole rollup hour.
      const start = START - 1000;
      const end = clock.now() + 1;
      const usage = await billing.keyUsage(keyId, { start, end });
      const fromLedger = foldKeyUsage(keyId, start, end, (await keyUsageQuery(keyId, start, end, WITH_AUDIO).execute(store.db)).rows, WITH_AUDIO);
      expect(usage).toEqual(fromLedger);
      expect(usage.totals.requests).toBe(3);
      // Audio 300 + 100 + 40 tokens at $40 per Mtok; the input counts what is neither cache nor audio.
      expect(usage.totals.dimensions.audio_input).toEqual({ count: 440n, cost: 17_600_000n });
      expect(usage.totals.dimensions.input).toEqual({ count: 500n + 400n + 460n, cost: 3_400_000n });
      const json = usageTotalsJson(usage.totals, WITH_AUDIO);
      expect(json.dimensions.audio_input).toEqual({ tokens: 440, cost_usd: "0.0176" });
      expect(Object.keys(json.dimensions)).toEqual(WITH_AUDIO.list.map((d) => d.name));
    });
  });
}
