// Key lookups without a database read per request: an in-process cache by key hash, dropped at
// once on a revoke in this process, and within a second in other processes through auth_events.
// A key's policy (ADR 0017) travels with the cached key, so a policy change made without an
// auth_events row would live at most POSITIVE_TTL_MS (5 minutes); every change the dashboard and the
// CLI make writes one. The expiry time is judged on every request against the gateway's clock
// (`now`), never when the entry was cached, so a cached key cannot outlive its expiry.
import type { Kysely } from "kysely";
import type { Account } from "../store/accounts-store.js";
import type { WorkspacePolicy } from "../core/budget-scopes.js";
import type { ApiKey } from "../store/keys-store.js";
import type { Store } from "../store/index.js";
import type { Database } from "../store/tables.js";
import { TagBudgetCache } from "./tag-budget-cache.js";

export interface Principal {
  key: ApiKey;
  account: Account;
  /** The workspace the key is tagged with (its budgets and models, ADR 0037); null or absent: none. */
  workspace?: WorkspacePolicy | null;
}

interface Entry {
  principal: Principal | null;
  expiresAt: number;
}

const POSITIVE_TTL_MS = 5 * 60_000;
/** Unknown keys are remembered briefly so that a flood of bad keys does not become a flood of queries. */
const NEGATIVE_TTL_MS = 1_000;
const MAX_ENTRIES = 100_000;
export const AUTH_EVENT_POLL_MS = 500;

export class AuthCache {
  readonly #entries = new Map<string, Entry>();
  readonly #inflight = new Map<string, Promise<Principal | null>>();
  #lastEventSeq = -1n;
  #timer: NodeJS.Timeout | undefined;
  /** The timer's poll under way: the next tick skips rather than queue a second one behind it. */
  #polling: Promise<void> | undefined;

  /** The gateway's clock (epoch ms); tests inject one. Judges key expiry, not the cache's own TTLs. */
  readonly now: () => number;
  /** The budgets on tags, read again on every poll (tag-budget-cache.ts). */
  readonly tagBudgets: TagBudgetCache;

  constructor(
    private readonly store: Store,
    now: () => number = Date.now,
  ) {
    this.now = now;
    this.tagBudgets = new TagBudgetCache(store);
  }

  async lookup(hash: string, now = Date.now()): Promise<Principal | null> {
    const cached = this.#entries.get(hash);
    if (cached && cached.expiresAt > now) return cached.principal;
    let pending = this.#inflight.get(hash);
    if (!pending) {
      pending = this.store.keys.findByHash(hash).finally(() => this.#inflight.delete(hash));
      this.#inflight.set(hash, pending);
    }
    const principal = await pending;
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(hash, { principal, expiresAt: now + (principal ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS) });
    return principal;
  }

  /**
   * The key and its account read afresh from the database, for routes that bill nothing (admission
   * re-reads the standing of those that do): a suspension or revocation made by another process is
   * seen at once there, not within the auth_events poll. The cache takes the fresh entry.
   */
  async refresh(hash: string, now = Date.now()): Promise<Principal | null> {
    const principal = await this.store.keys.findByHash(hash);
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(hash, { principal, expiresAt: now + (principal ? POSITIVE_TTL_MS : NEGATIVE_TTL_MS) });
    return principal;
  }

  /** Drops one key, e.g. right after this process revoked it. */
  invalidateKey(hash: string): void {
    this.#entries.delete(hash);
  }

  /** Drops every key of an account, e.g. after a status or tier change. */
  invalidateAccount(accountId: string): void {
    for (const [hash, entry] of this.#entries) {
      if (!entry.principal || entry.principal.account.id === accountId) this.#entries.delete(hash);
    }
  }

  clear(): void {
    this.#entries.clear();
  }

  /** Starts following auth_events written by any process sharing the database. */
  async start(): Promise<void> {
    this.#lastEventSeq = await latestSeq(this.store.db);
    await this.tagBudgets.reload();
    // While the database is out of reach each poll waits out a timeout (decision 0049): polls one
    // behind the other would hold a pooled connection each, and leave none to the requests.
    this.#timer = setInterval(() => {
      if (this.#polling !== undefined) return;
      this.#polling = this.poll()
        .catch(() => undefined)
        .finally(() => (this.#polling = undefined));
    }, AUTH_EVENT_POLL_MS);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }

  async poll(): Promise<void> {
    // A failed read keeps the budgets last read; the key events below still apply.
    await this.tagBudgets.reload().catch(() => undefined);
    const events = await this.store.db
      .selectFrom("auth_events")
      .select(["seq", "key_hash", "account_id"])
      .where("seq", ">", this.#lastEventSeq)
      .orderBy("seq")
      .limit(1000)
      .execute();
    for (const event of events) {
      if (event.key_hash) this.invalidateKey(event.key_hash);
      if (event.account_id) this.invalidateAccount(event.account_id);
      this.#lastEventSeq = BigInt(event.seq);
    }
  }
}

async function latestSeq(db: Kysely<Database>): Promise<bigint> {
  const row = await db
    .selectFrom("auth_events")
    .select((eb) => eb.fn.max("seq").as("seq"))
    .executeTakeFirst();
  return row?.seq == null ? 0n : BigInt(row.seq);
}
