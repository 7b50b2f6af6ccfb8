// The upstream names its own account and request in its response headers (openai-organization,
// x-request-id, apim-request-id, cf-ray…). Those headers never reach the client (scrubHeaders),
// but the same values also turn up in the body, in stream events and in error messages ("Rate
// limit reached … in organization org-abc123def456"), often too short or too shapeless for the
// scrubber's patterns. So each response gets a scrubber that also removes, verbatim, the
// identifier values its own headers carry. A response without such headers keeps the base
// scrubber itself: nothing is built, and the stream's pass-through check costs nothing more.
import { REDACTED, walkJson, type Scrubber } from "./scrub.js";

type Headers = Record<string, string | string[] | undefined>;

// Names whose value identifies the upstream account, project, request or edge.
const ID_HEADER_NAMES = new Set([
  "openai-organization",
  "openai-project",
  "anthropic-organization-id",
  "cf-ray",
  "x-amz-id-2",
  "x-amz-cf-id",
  "x-guploader-uploadid",
  "x-cloud-trace-context",
]);
// x-request-id, request-id, apim-request-id, x-ms-(client-)request-id, x-amzn-requestid,
// x-amz-request-id, x-amzn-trace-id, x-correlation-id, x-goog-…-id, x-ms-…-id.
const ID_HEADER_PATTERN = /(?:request|trace|correlation|operation)-?id$|^x-(?:goog|ms|amzn?)-[a-z0-9-]*id$/;

/**
 * A learned value is this long at least, and holds a digit, "-" or "_": so "undefined", "unknown"
 * or "STANDARD" in an id header cannot make an ordinary word disappear from every answer.
 */
const MIN_VALUE_LENGTH = 8;
const ID_LIKE = /[0-9_-]/;
const MAX_VALUE_LENGTH = 256;
/** Bounds the work per chunk whatever the upstream sends. */
const MAX_VALUES = 16;
// "8a1b2c3d4e5f6789-SJC": Cloudflare's pages name the ray without the data-centre suffix.
const CF_RAY = /^([0-9a-f]{16})-[A-Z]{3,4}$/;

// Header names seen so far and whether they carry ids: an upstream sends the same dozen names on
// every response, so this is a lookup instead of a RegExp per header. Bounded against odd upstreams.
const nameCarriesIds = new Map<string, boolean>();
const MAX_NAMES_REMEMBERED = 1_000;

function carriesIds(name: string): boolean {
  let known = nameCarriesIds.get(name);
  if (known === undefined) {
    const lower = name.toLowerCase();
    known = ID_HEADER_NAMES.has(lower) || ID_HEADER_PATTERN.test(lower);
    if (nameCarriesIds.size >= MAX_NAMES_REMEMBERED) nameCarriesIds.clear();
    nameCarriesIds.set(name, known);
  }
  return known;
}

// "Root=1-5759e988-bd86…;Parent=5399…;Sampled=1", Google's "TRACE/SPAN;o=1": each part is an identifier of its own.
const SEPARATORS = /[\s,;=/]+/;

function addTokens(value: string, values: Set<string>): void {
  for (const token of SEPARATORS.test(value) ? value.split(SEPARATORS) : [value]) {
    if (token.length < MIN_VALUE_LENGTH || token.length > MAX_VALUE_LENGTH || !ID_LIKE.test(token)) continue;
    values.add(token);
    const ray = CF_RAY.exec(token);
    if (ray) values.add(ray[1]!);
  }
}

/** The identifier values this response's headers carry, longest first. */
export function identifiersIn(headers: Headers): string[] {
  let values: Set<string> | null = null;
  for (const name in headers) {
    if (!carriesIds(name)) continue;
    const raw = headers[name];
    values ??= new Set();
    if (typeof raw === "string") addTokens(raw, values);
    else if (Array.isArray(raw)) for (const value of raw) if (typeof value === "string") addTokens(value, values);
  }
  if (values === null) return [];
  // Longest first, so a value that contains another is removed whole.
  return [...values].sort((a, b) => b.length - a.length).slice(0, MAX_VALUES);
}

/** The scrubber for one upstream response: the request's, plus the identifiers its headers name. */
export function scrubberForResponse(base: Scrubber, headers: Headers): Scrubber {
  const values = identifiersIn(headers);
  if (values.length === 0) return base;
  const removeValues = (text: string): string => {
    let out = text;
    for (const value of values) if (out.includes(value)) out = out.split(value).join(REDACTED);
    return out;
  };
  // Values first, so that a pattern matching inside a value cannot leave the rest of it behind.
  const scrubText = (text: string): string => (typeof text === "string" ? base.scrubText(removeValues(text)) : removeValues(base.scrubText(text)));
  return {
    scrubText,
    scrubJson: (value) => walkJson(value, scrubText),
    // An escaped form of a value holds a backslash, which the base check already refuses.
    isCleanJsonText: (text) => base.isCleanJsonText(text) && !values.some((value) => text.includes(value)),
  };
}
