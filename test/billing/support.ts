// Fixtures shared by the billing suites: a priced model, accounts and keys, and an injectable clock.
import { afterAll, beforeAll, expect } from "vitest";
import { StoreBilling, type StoreBillingOptions } from "../../src/billing/billing-store.js";
import type { ModelConfig, ProviderConfig } from "../../src/config/load.js";
import { newId } from "../../src/core/ids.js";
import type { Nano } from "../../src/core/money.js";
import type { Usage } from "../../src/core/usage.js";
import type { AdmissionRequest } from "../../src/billing/types.js";
import { ROLLUP_GROUP_COLUMNS } from "../../src/store/dimension-sql.js";
import { openStore, type Store } from "../../src/store/index.js";
import { createTestDatabase, type TestDatabase } from "../support/databases.js";

export const provider: ProviderConfig = {
  name: "mock",
  type: "openai",
  baseUrl: "http://127.0.0.1:9",
  sharedKeys: [],
  apis: new Set(["chat"]),
  headers: {},
  timeoutMs: 1000,
  connectTimeoutMs: 1000,
  maxConnections: 16,
  connectionWaitMs: 1000,
  http2: false,
};

/** $2.50 / $1.25 / $10.00 per million tokens: 2500, 1250 and 10000 nano-USD per token. */
export function chatModel(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return {
    id: "mock-chat",
    kind: "chat",
    provider,
    upstreamModel: "mock-chat",
    contextWindow: 128_000,
    maxOutputTokens: 16_384,
    defaultOutputTokens: 4096,
    modalities: { input: ["text"], output: ["text"] },
    pricing: {
      inputPerMtok: 2_500_000_000n,
      cachedInputPerMtok: 1_250_000_000n,
      cacheWrite5mPerMtok: 2_500_000_000n,
      cacheWrite1hPerMtok: 2_500_000_000n,
      webSearchPerCall: 0n,
      perRequest: 0n,
      outputPerMtok: 10_000_000_000n,
      perImage: new Map(),
      perVideoSecond: 0n,
    },
    tiers: ["default"],
    ...overrides,
  };
}

export const MODEL = chatModel();

export function usage(inputTokens: number, outputTokens: number, extra: Partial<Usage> = {}): Usage {
  return { inputTokens, cachedInputTokens: 0, outputTokens, reasoningTokens: 0, estimated: false, ...extra };
}

export function admission(accountId: string, keyId: string, input = 1000, output = 500, extra: Partial<AdmissionRequest> = {}): AdmissionRequest {
  return {
    requestId: newId("req"),
    accountId,
    keyId,
    model: MODEL,
    route: "chat",
    projectedInputTokens: input,
    projectedOutputTokens: output,
    ...extra,
  };
}

/** 1000 input + 500 output tokens at MODEL's prices. */
export const DEFAULT_PROJECTION: Nano = 7_500_000n;

export function openTestStore(database: TestDatabase, migrate = true): Promise<Store> {
  return openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: "test-secret-0123456789", migrate });
}

/**
 * A fresh database, store and StoreBilling for one describe block (closed and dropped after it);
 * `bind` hands them to the block's variables once they exist.
 */
export function useBillingStore(
  kind: TestDatabase["kind"],
  bind: (fixture: { store: Store; billing: StoreBilling; database: TestDatabase }) => void,
  options: StoreBillingOptions = {},
): void {
  let database: TestDatabase | undefined;
  let store: Store | undefined;
  let billing: StoreBilling | undefined;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    store = await openTestStore(database);
    billing = new StoreBilling(store.handle, options);
    bind({ store, billing, database });
  });
  afterAll(async () => {
    await billing?.stopSweeper();
    await store?.close();
    await database?.drop();
  });
}

export async function makeAccount(store: Store, options: { balance?: Nano; monthlyBudget?: Nano | null; monthlyTokenBudget?: number | null } = {}): Promise<string> {
  const account = await store.accounts.create({ email: `${newId("u")}@example.com`, tier: "default", ...options });
  return account.id;
}

export async function makeKey(store: Store, accountId: string, caps: { budgetCap?: Nano | null; tokenCap?: number | null } = {}): Promise<string> {
  const { key } = await store.keys.create({ accountId, ...caps });
  return key.id;
}

/** The columns usage_hourly sums, as the database has them (its columns but the group and the request count), sorted. */
export async function rollupSummedColumns(store: Store): Promise<string[]> {
  const table = (await store.db.introspection.getTables()).find((t) => t.name === "usage_hourly");
  const group = new Set<string>([...ROLLUP_GROUP_COLUMNS, "requests"]);
  return (table?.columns ?? [])
    .map((c) => c.name)
    .filter((name) => !group.has(name))
    .sort();
}

export class Clock {
  constructor(public ms: number) {}
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

export async function expectRefusal(promise: Promise<unknown>, type: string, status = 402): Promise<void> {
  await expect(promise).rejects.toMatchObject({ name: "GatewayError", type, status });
}

/** Every counter the 502 contract protects, plus the settlements' ledger rows and the hold reservations. */
export async function counters(store: Store, accountId: string, keyId: string) {
  const account = await store.db
    .selectFrom("accounts")
    .select(["balance_nano", "total_spent_nano", "held_nano", "held_tokens"])
    .where("id", "=", accountId)
    .executeTakeFirstOrThrow();
  const key = await store.db.selectFrom("keys").select(["spent_nano", "tokens_used", "held_nano", "held_tokens", "status"]).where("id", "=", keyId).executeTakeFirstOrThrow();
  // Usage rows only: the opening balance's credit row is not a settlement.
  const usageRows = await store.db
    .selectFrom("ledger")
    .select((eb) => eb.fn.countAll<bigint>().as("n"))
    .where("account_id", "=", accountId)
    .where("kind", "=", "usage")
    .executeTakeFirstOrThrow();
  const ledger = Number(usageRows.n);
  const monthly = await store.db.selectFrom("monthly_usage").select(["month", "cost_nano", "tokens", "requests"]).where("account_id", "=", accountId).orderBy("month").execute();
  const holds = await store.db.selectFrom("holds").select("request_id").where("account_id", "=", accountId).orderBy("request_id").execute();
  return { account, key, ledger, monthly, holds };
}
