// Text the gateway stores must be storable the same on both databases: PostgreSQL refuses a NUL in
// text ("invalid byte sequence 0x00") where SQLite keeps it, and neither should keep control
// characters or an unpaired surrogate (half of a UTF-16 pair, which is no character at all) in an
// email, a name or a reason that a person reads back.
import { GatewayError, invalidRequest } from "../errors/catalogue.js";

// eslint-disable-next-line no-control-regex -- the control characters are what this refuses
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex -- as CONTROL, less the tab and the line breaks of a file's text
const CONTROL_IN_FILE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
/** A high surrogate not followed by a low one, or a low one not preceded by a high one (code units, no u flag). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string cannot be stored, or null when it can. */
export function unstorableReason(text: string): string | null {
  if (CONTROL.test(text)) return "must not contain control characters (U+0000 to U+001F, U+007F)";
  if (LONE_SURROGATE.test(text)) return "must not contain an unpaired surrogate";
  return null;
}

/**
 * The same for a body field holding an uploaded file's text (a price file, parsed and never stored
 * as it is): tabs and line breaks are its own, every other control character is still refused.
 */
export function unstorableFileTextReason(text: string): string | null {
  if (CONTROL_IN_FILE.test(text)) return "must not contain control characters other than tabs and line breaks (U+0000 to U+001F, U+007F)";
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
 * never stored as a column. `fileTextFields`: the top-level body fields holding a file's text
 * (a route's config.fileTextFields), checked by unstorableFileTextReason.
 */
export function refuseUnstorableText(request: { body?: unknown; query?: unknown; params?: unknown }, fileTextFields: readonly string[] = []): void {
  for (const field of fileTextFields) {
    const body = request.body as Record<string, unknown> | null | undefined;
    const text = body?.[field];
    const reason = typeof text === "string" ? unstorableFileTextReason(text) : null;
    if (reason !== null) throw new GatewayError("invalid_request", `${field}: ${reason}.`, { param: field });
  }
  const body =
    fileTextFields.length === 0 || typeof request.body !== "object" || request.body === null
      ? request.body
      : Object.fromEntries(Object.entries(request.body).filter(([key]) => !fileTextFields.includes(key)));
  for (const value of [body, request.query, request.params]) {
    const found = findUnstorableText(value, "");
    if (found) throw new GatewayError("invalid_request", `${found.field || "body"}: ${found.reason}.`, { param: found.field || "body" });
  }
}

/** An identifier from a request body (a model id, a stored response's id): 400 naming the field when it cannot be stored. */
/** The body fields of a route that hold a file's text (its Fastify config.fileTextFields), for refuseUnstorableText. */
export function fileTextFieldsOf(request: { routeOptions: { config: unknown } }): readonly string[] {
  const config = request.routeOptions.config as { fileTextFields?: readonly string[] } | undefined;
  return config?.fileTextFields ?? [];
}

export function checkStorableId(field: string, value: string): void {
  const reason = unstorableReason(value);
  if (reason !== null) throw invalidRequest(field, `${field}: ${reason}.`);
}
