// Idempotency-Key for admin writes that must not be applied twice (credits and debits). The key is
// claimed by inserting its row in the transaction of the change, together with the hash of the request
// (method, path and body); the response is stored in that row before the commit. So:
//   - a retry after the commit gets the stored response, status and body alike;
//   - concurrent retries: the database lets one insert win (PostgreSQL makes the others wait on the
//     unique key until it commits, SQLite runs the transactions one after the other); the losers roll
//     back everything they did and answer with the winner's stored response;
//   - the same key with another request: 409 conflict, code idempotency_key_reused;
//   - a failed request stores nothing (its transaction rolled back): a retry runs it again.
import { z } from "zod";
import { createHash } from "node:crypto";
import type { Transaction } from "kysely";
import { nowMs } from "../core/ids.js";
import { GatewayError } from "../errors/catalogue.js";
import { dbErrorKind } from "../store/db-errors.js";
import type { Store } from "../store/index.js";
import type { Database } from "../store/tables.js";

export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,200}$/;

export interface StoredResponse {
  status: number;
  body: unknown;
  replayed: boolean;
}

/** The header as checked (and described in the OpenAPI document). */
export const idempotencyHeaderSchema = z.object({
  "idempotency-key": z
    .string()
    .regex(IDEMPOTENCY_KEY_PATTERN)
    .optional()
    .describe("A retry with the same key and request gets the first answer again; 1 to 200 printable ASCII characters"),
});

/** The key from the Idempotency-Key header; null when absent; 400 when malformed. */
export function idempotencyKeyOf(headers: Record<string, string | string[] | undefined>): string | null {
  const result = idempotencyHeaderSchema.safeParse({ "idempotency-key": headers["idempotency-key"] });
  if (!result.success) {
    throw new GatewayError("invalid_request", "Idempotency-Key must be 1 to 200 printable ASCII characters without spaces.", { param: "Idempotency-Key" });
  }
  return result.data["idempotency-key"] ?? null;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function requestHash(method: string, path: string, body: unknown): string {
  return createHash("sha256")
    .update(`${method} ${path}\n${canonical(body ?? null)}`)
    .digest("hex");
}

function reused(): GatewayError {
  return new GatewayError("conflict", "This Idempotency-Key was already used with a different request.", { code: "idempotency_key_reused", param: "Idempotency-Key" });
}

async function stored(store: Store, key: string, hash: string): Promise<StoredResponse | null> {
  const row = await store.db.selectFrom("admin_idempotency").selectAll().where("key", "=", key).executeTakeFirst();
  if (!row) return null;
  if (row.request_hash !== hash) throw reused();
  if (row.response === null || row.status === null) return null;
  return { status: Number(row.status), body: JSON.parse(row.response) as unknown, replayed: true };
}

class KeyTaken extends Error {}

/**
 * Runs `change` (which must open its transaction with `open`, claim the key with `claim` first and
 * return the response) at most once per key; every call with that key answers with the same response.
 */
export async function once(
  store: Store,
  key: string | null,
  hash: string,
  change: (
    claim: (trx: Transaction<Database>) => Promise<void>,
    save: (trx: Transaction<Database>, status: number, body: unknown) => Promise<void>,
  ) => Promise<{ status: number; body: unknown }>,
): Promise<StoredResponse> {
  const noop = async () => undefined;
  if (key === null) return { ...(await change(noop, noop)), replayed: false };
  const earlier = await stored(store, key, hash);
  if (earlier) return earlier;
  const claim = async (trx: Transaction<Database>) => {
    try {
      await trx.insertInto("admin_idempotency").values({ key, request_hash: hash, status: null, response: null, created_at: nowMs() }).execute();
    } catch (error) {
      if (dbErrorKind(error) === "unique") throw new KeyTaken();
      throw error;
    }
  };
  const save = async (trx: Transaction<Database>, status: number, body: unknown) => {
    await trx
      .updateTable("admin_idempotency")
      .set({ status: BigInt(status), response: JSON.stringify(body) })
      .where("key", "=", key)
      .execute();
  };
  try {
    return { ...(await change(claim, save)), replayed: false };
  } catch (error) {
    if (!(error instanceof KeyTaken)) throw error;
    const winner = await stored(store, key, hash);
    if (!winner) throw new GatewayError("conflict", "A request with this Idempotency-Key is still in progress; retry shortly.", { code: "idempotency_key_in_use" });
    return winner;
  }
}
