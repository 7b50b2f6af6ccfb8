// The JSON body parser: Fastify's own (which keeps its __proto__/constructor poisoning checks)
// behind a one-pass pre-scan that refuses bodies nested deeper than MAX_JSON_DEPTH. Deep nesting
// otherwise parses and then overflows the stack in whatever walks the value (a 500), and costs
// the event loop up to ~160 ms per 1 MB body; the scan stops at the first level too deep.
import type { FastifyInstance } from "fastify";
import { invalidRequest } from "../errors/catalogue.js";
import { jsonErrorPlace } from "./json-error.js";

/** Objects and arrays inside each other; real tool JSON schemas stay well below 20. */
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Whether `text` nests objects and arrays deeper than `limit`. Linear: string contents are
 * skipped with indexOf, and the scan stops at the first level over the limit. Malformed JSON is
 * left to the parser (an unterminated string ends the scan).
 */
export function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) return false;
      i = end;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** A quote preceded by an odd number of backslashes is part of the string. */
function isEscaped(text: string, quoteAt: number): boolean {
  let backslashes = 0;
  while (text.charCodeAt(quoteAt - 1 - backslashes) === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

/** Replaces the server's application/json parser (inherited by every route, the dashboard's too). */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser("error", "error");
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    const text = body.toString(); // parseAs "string": already a string
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(invalidRequest("body", `The JSON body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep, the gateway's limit.`), undefined);
      return;
    }
    // Fastify's default parser answers through done() and returns nothing to wait for. A body that
    // is not JSON is refused naming the place, once (Fastify's message names none).
    void parseJson(request, text, (error, parsed) => {
      const place = error && (error as { code?: string }).code === "FST_ERR_CTP_INVALID_JSON_BODY" ? jsonErrorPlace(text) : null;
      if (place) done(invalidRequest("body", `The body is not valid JSON: at line ${place.line}, column ${place.column}, expected ${place.expected}.`), undefined);
      else done(error, parsed);
    });
  });
}
