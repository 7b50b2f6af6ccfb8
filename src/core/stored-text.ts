// Text the gateway stores must be storable the same on both databases: PostgreSQL refuses a NUL in
// text ("invalid byte sequence 0x00") where SQLite keeps it, and neither should keep control
// characters or an unpaired surrogate (half of a UTF-16 pair, which is no character at all) in an
// email, a name or a reason that a person reads back.
import { GatewayError, invalidRequest } from "../errors/catalogue.js";

// eslint-disable-next-line no-control-regex -- the control characters are what this refuses
const CONTROL = /[\u0000-\u001f\u007f]/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units, no u flag). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string cannot be stored, or null when it can. */
export function unstorableReason(text: string): string | null {
  if (CONTROL.test(text)) return "must not contain control characters (U+0000 to U+001F, U+007F)";
  if (LONE_SURROGATE.test(text)) return "must not contain an unpaired surrogate";
  return null;
}

/**
 * The first string inside a JSON value (a request's body, query or params) that cannot be stored:
 * its field, as `accounts[2].email`, and why; null when every string can be.
 */
export function findUnstorableText(value: unknown, field: string): { field: string; reason: string } | null {
  if (typeof value === "string") {
    const reason = unstorableReason(value);
    return reason === null ? null : { field, reason };
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], `${field}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) {
      const name = field === "" ? key : `${field}.${key}`;
      const reason = unstorableReason(key);
      if (reason !== null) return { field: name, reason: `its name ${reason}` };
      const found = findUnstorableText(item, name);
      if (found) return found;
    }
  }
  return null;
}

/**
 * Refuses a request whose body, query or path holds a string that cannot be stored: 400
 * invalid_request naming the field, the same on SQLite and PostgreSQL, before any handler runs.
 * The server checks every route's query and path; the management APIs their bodies too; the model
 * routes only their identifiers (checkStorableId): a prompt may hold any text, it is forwarded,
 * never stored as a column.
 */
export function refuseUnstorableText(request: { body?: unknown; query?: unknown; params?: unknown }): void {
  for (const value of [request.body, request.query, request.params]) {
    const found = findUnstorableText(value, "");
    if (found) throw new GatewayError("invalid_request", `${found.field || "body"}: ${found.reason}.`, { param: found.field || "body" });
  }
}

/** An identifier from a request body (a model id, a stored response's id): 400 naming the field when it cannot be stored. */
export function checkStorableId(field: string, value: string): void {
  const reason = unstorableReason(value);
  if (reason !== null) throw invalidRequest(field, `${field}: ${reason}.`);
}
