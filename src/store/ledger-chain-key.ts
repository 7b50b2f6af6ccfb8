// The ledger chain's key (ADR 0032; docs/storage.md, "The ledger is a hash chain"). Without one, a
// row's hash is the SHA-256 of ledger-chain.ts, which anyone who can write the database can compute
// for a row of their own. With GATEWAY_LEDGER_SECRET configured, every row from the ledger id recorded
// in ledger_chain_keys on carries HMAC-SHA256(K, that SHA-256 in hex) instead, K derived from the
// secret: a row appended with plain SQL cannot carry it, and `ledger verify` names it.
//
// Who seals a row's hash with K:
//   SQLite: the gateway's own code, on its connection: the registered gw_ledger_hash function and
//     SQLite settlement call LedgerChainState.seal (database.ts, settlement-sqlite.ts).
//   PostgreSQL: the trigger ledger_chain_key (migration 0023), after ledger_chain computed the
//     SHA-256, for a row an epoch covers, from the session setting gateway.ledger_key, which a
//     gateway connection carries from its start (a startup option, database.ts: never sent as a
//     statement, so never in pg_stat_activity nor in a statement log). The setting holds HMAC's two
//     padded keys and the key id, not the secret; a session without it, or with another key, appends
//     no row the epoch covers (the trigger refuses).
// ledger_chain_keys records, per key, the first ledger id it covers (an "epoch"), with a MAC of that
// record under K; rows before the first epoch stay as they were and are verified unkeyed. The gateway
// server records the epoch when it starts with a secret and finds none (a CLI command does not: a
// secret given to `ledger verify` alone must not key the chain under a running gateway without it);
// any process refuses to append when the chain is keyed and its secret is absent or another
// (LedgerChainState "locked").
import { createHmac, timingSafeEqual } from "node:crypto";
import { sql, type Kysely } from "kysely";
import type SqliteDatabase from "better-sqlite3";
import type { Dialect } from "./dialect.js";
import { SqliteBusyWait } from "./sqlite-busy-wait.js";
import type { Database } from "./tables.js";

/** The PostgreSQL session setting that carries the key to the trigger (migration 0023 holds its literal copy). */
export const POSTGRES_LEDGER_KEY_SETTING = "gateway.ledger_key";

/** The fewest characters GATEWAY_LEDGER_SECRET may have. */
export const MIN_LEDGER_SECRET_LENGTH = 16;

const BLOCK_BYTES = 64;

/** The key derived from GATEWAY_LEDGER_SECRET: what seals hashes; the secret itself is not kept. */
export class LedgerChainKey {
  readonly #key: Buffer;
  /** 16 hex characters naming the key (an HMAC under it: says nothing of it), as ledger_chain_keys records it. */
  readonly id: string;

  constructor(secret: string) {
    if (secret.length < MIN_LEDGER_SECRET_LENGTH) throw new RangeError(`the ledger secret must have at least ${MIN_LEDGER_SECRET_LENGTH} characters`);
    this.#key = createHmac("sha256", secret).update("gateway-ledger-chain-key-v1").digest();
    this.id = this.mac("gateway-ledger-chain-key-id").slice(0, 16);
  }

  /** HMAC-SHA256, lowercase hex, of `text` (UTF-8) under the key. */
  mac(text: string): string {
    return createHmac("sha256", this.#key).update(text, "utf8").digest("hex");
  }

  /** A row's keyed hash: the MAC of its unkeyed hash (64 hex characters). */
  seal(unkeyedHash: string): string {
    return this.mac(unkeyedHash);
  }

  /**
   * The value of gateway.ledger_key for PostgreSQL's trigger: HMAC's inner and outer padded keys
   * (K zero-padded to SHA-256's 64-byte block, XOR 0x36 and XOR 0x5c), hex, one after the other,
   * so that the trigger computes the same HMAC with the built-in sha256() alone,
   * sha256(opad || sha256(ipad || message)); then the key id, which the trigger compares with the
   * epoch's.
   */
  postgresSetting(): string {
    const padded = Buffer.alloc(BLOCK_BYTES);
    this.#key.copy(padded);
    const inner = Buffer.from(padded.map((b) => b ^ 0x36));
    const outer = Buffer.from(padded.map((b) => b ^ 0x5c));
    return inner.toString("hex") + outer.toString("hex") + this.id;
  }
}

/** One row of ledger_chain_keys: from ledger id `fromId` on, rows are sealed with the key named `keyId`. */
export interface LedgerChainEpoch {
  fromId: bigint;
  keyId: string;
  createdAt: bigint;
  mac: string;
}

/** What the MAC of an epoch covers. */
function epochText(epoch: Omit<LedgerChainEpoch, "mac">): string {
  return `gateway-ledger-chain-epoch\n${epoch.fromId}\n${epoch.keyId}\n${epoch.createdAt}`;
}

/** True when `epoch` carries the MAC `key` gives it (false for another key's epoch). */
export function epochIsAuthentic(epoch: LedgerChainEpoch, key: LedgerChainKey): boolean {
  const expected = Buffer.from(key.mac(epochText(epoch)));
  const found = Buffer.from(epoch.mac);
  return epoch.keyId === key.id && expected.length === found.length && timingSafeEqual(expected, found);
}

/**
 * How this process hashes the ledger rows it appends:
 *   unkeyed: no epoch yet: the SHA-256 as it is (with a secret too, until a gateway server keys the chain);
 *   keyed:   the secret's key is the latest epoch's: sealed with it;
 *   locked:  the chain is keyed but this process has no secret, or another one: it appends nothing
 *            (seal throws; on PostgreSQL the trigger refuses a session without the key);
 *   pending: a secret was given and the epochs were not read yet (openStore reads them after migrating).
 */
export type LedgerChainMode =
  { kind: "unkeyed" } | { kind: "keyed"; epoch: LedgerChainEpoch } | { kind: "locked"; epoch: LedgerChainEpoch; reason: "no_secret" | "other_secret" } | { kind: "pending" };

/** The one message of a locked chain, for the refusal to start and for a refused append. */
export function lockedChainMessage(mode: Extract<LedgerChainMode, { kind: "locked" }>): string {
  const what = mode.reason === "no_secret" ? "GATEWAY_LEDGER_SECRET is not set" : "GATEWAY_LEDGER_SECRET is not the secret it is keyed with";
  return `the ledger chain is keyed from row ${mode.epoch.fromId} (key id ${mode.epoch.keyId}) and ${what}; ledger rows cannot be appended`;
}

/** A database handle's chain state: the key (null without a secret) and, once read, the mode. */
export class LedgerChainState {
  #mode: LedgerChainMode;

  constructor(readonly key: LedgerChainKey | null) {
    this.#mode = key === null ? { kind: "unkeyed" } : { kind: "pending" };
  }

  get mode(): LedgerChainMode {
    return this.#mode;
  }

  /** A row's hash as this process appends it (see LedgerChainMode); throws when it may append none. */
  seal(unkeyedHash: string): string {
    const mode = this.#mode;
    switch (mode.kind) {
      case "unkeyed":
        return unkeyedHash;
      case "keyed":
        return this.key!.seal(unkeyedHash);
      case "locked":
        throw new Error(lockedChainMessage(mode));
      case "pending":
        throw new Error("the ledger chain's key is configured but the database's chain keys were not read yet");
    }
  }

  /**
   * Reads ledger_chain_keys (after the migrations) and sets the mode. With a secret, no epoch yet and
   * `keyTheChain` (the gateway server), records the first: from the ledger's next id on, under a lock
   * that keeps every append out meanwhile (SQLite: BEGIN IMMEDIATE; PostgreSQL: the ledger locked
   * EXCLUSIVE, which waits for appends in flight to commit, so no row below the recorded id is
   * appended after it).
   */
  async establish(db: Kysely<Database>, dialect: Dialect, sqlite: SqliteDatabase.Database | null, keyTheChain: boolean, now = Date.now()): Promise<LedgerChainMode> {
    let latest = (await readChainEpochs(db)).at(-1);
    const key = this.key;
    if (key !== null && latest === undefined && keyTheChain) {
      await (dialect === "sqlite" ? recordFirstEpochSqlite(sqlite!, key, now) : recordFirstEpochPostgres(db, key, now));
      latest = (await readChainEpochs(db)).at(-1);
    }
    if (latest === undefined) this.#mode = { kind: "unkeyed" };
    else if (key === null) this.#mode = { kind: "locked", epoch: latest, reason: "no_secret" };
    else if (latest.keyId !== key.id) this.#mode = { kind: "locked", epoch: latest, reason: "other_secret" };
    else this.#mode = { kind: "keyed", epoch: latest };
    return this.#mode;
  }
}

/** Every epoch, oldest first. */
export async function readChainEpochs(db: Kysely<Database>): Promise<LedgerChainEpoch[]> {
  const rows = await db.selectFrom("ledger_chain_keys").select(["from_id", "key_id", "created_at", "mac"]).orderBy("from_id").execute();
  return rows.map((r) => ({ fromId: BigInt(r.from_id), keyId: r.key_id, createdAt: BigInt(r.created_at), mac: r.mac }));
}

function newEpoch(key: LedgerChainKey, fromId: bigint, now: number): LedgerChainEpoch {
  const epoch = { fromId, keyId: key.id, createdAt: BigInt(now) };
  return { ...epoch, mac: key.mac(epochText(epoch)) };
}

function recordFirstEpochSqlite(sqlite: SqliteDatabase.Database, key: LedgerChainKey, now: number): void {
  const record = sqlite.transaction(() => {
    if (sqlite.prepare("select 1 from ledger_chain_keys limit 1").get() !== undefined) return;
    // AUTOINCREMENT: the next id is above every id ever used, so above this one's predecessor.
    const { last } = sqlite.prepare("select coalesce(max(id), 0) as last from ledger").get() as { last: bigint };
    const epoch = newEpoch(key, BigInt(last) + 1n, now);
    sqlite.prepare("insert into ledger_chain_keys (from_id, key_id, created_at, mac) values (?, ?, ?, ?)").run(epoch.fromId, epoch.keyId, epoch.createdAt, epoch.mac);
  });
  SqliteBusyWait.of(sqlite).waitForLock();
  record.immediate();
}

async function recordFirstEpochPostgres(db: Kysely<Database>, key: LedgerChainKey, now: number): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Waits for every append in flight (they hold ROW EXCLUSIVE until they commit) and keeps new
    // ones out until this commits; ids are drawn from a sequence, so every later one is above `last`.
    await sql`lock table ledger in exclusive mode`.execute(trx);
    if ((await trx.selectFrom("ledger_chain_keys").select("from_id").limit(1).executeTakeFirst()) !== undefined) return;
    const { last } = (await sql<{ last: bigint | string }>`select coalesce(max(id), 0) as last from ledger`.execute(trx)).rows[0]!;
    const epoch = newEpoch(key, BigInt(last) + 1n, now);
    await trx.insertInto("ledger_chain_keys").values({ from_id: epoch.fromId, key_id: epoch.keyId, created_at: epoch.createdAt, mac: epoch.mac }).execute();
  });
}

/** `url` with the key's PostgreSQL setting added to its startup options (after any it has). */
export function withLedgerKeyOption(url: string, key: LedgerChainKey): string {
  const parsed = new URL(url);
  const option = `-c ${POSTGRES_LEDGER_KEY_SETTING}=${key.postgresSetting()}`;
  const existing = parsed.searchParams.get("options");
  parsed.searchParams.set("options", existing ? `${existing} ${option}` : option);
  return parsed.toString();
}
