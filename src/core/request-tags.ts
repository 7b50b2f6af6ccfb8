// Tags on a request (docs/billing.md, "Tags"): `x-gateway-tags: project=atlas,env=prod`, merged with
// the key's default tags, stored with the request's ledger row (ledger_tags, migration 0030) and in the
// request log, and held against the budgets set on a tag (tag budgets: budget scopes "tag:...").
// Bounds, so that a hostile header can neither grow the ledger nor lock many budget rows:
//   at most MAX_TAGS tags (the header's and the key's together); a key 1-64 characters of
//   [a-z0-9_.-] starting with a letter or digit (upper case is lowered); a value 1-128 printable
//   ASCII characters (space allowed inside, trimmed at the ends) without `,` or `=`; each key once.
// A key's default tag wins over the request's tag of the same key, so that a client cannot move its
// spend out of the cost centre (and the budget) its key was given; a request may add other keys.
import { GatewayError } from "../errors/catalogue.js";

export const TAGS_HEADER = "x-gateway-tags";
export const MAX_TAGS = 10;
export const MAX_TAG_KEY_LENGTH = 64;
export const MAX_TAG_VALUE_LENGTH = 128;
/** The header's longest accepted text: MAX_TAGS of the longest tags with their commas and a space each. */
const MAX_HEADER_LENGTH = MAX_TAGS * (MAX_TAG_KEY_LENGTH + MAX_TAG_VALUE_LENGTH + 4);

const TAG_KEY = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
// Printable ASCII without `,` and `=`; the ends are trimmed before the check.
const TAG_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{1,128}$/;

/** Tags by key (lower case), values as given; at most MAX_TAGS. */
export type Tags = Readonly<Record<string, string>>;

/** Why a key or value is not a tag's; null when it is. */
export function tagProblem(key: string, value: string): string | null {
  if (!TAG_KEY.test(key)) return `a tag key is 1 to ${MAX_TAG_KEY_LENGTH} characters of a-z, 0-9, "_", "." and "-", starting with a letter or digit`;
  if (value !== value.trim() || !TAG_VALUE.test(value) || value.trim().length === 0) {
    return `a tag value is 1 to ${MAX_TAG_VALUE_LENGTH} printable ASCII characters without "," or "=" (the tag ${key})`;
  }
  return null;
}

function malformed(message: string): GatewayError {
  return new GatewayError("invalid_request", `The ${TAGS_HEADER} header is malformed: ${message}. Send key=value pairs separated by commas.`, { param: TAGS_HEADER });
}

/** The header's tags; {} when it is absent or blank. Throws 400 invalid_request naming the header. */
export function parseTagsHeader(header: string | string[] | undefined): Tags {
  if (header === undefined) return {};
  const text = Array.isArray(header) ? header.join(",") : header;
  if (text.trim().length === 0) return {};
  if (text.length > MAX_HEADER_LENGTH) throw malformed(`at most ${MAX_HEADER_LENGTH} characters`);
  const tags: Record<string, string> = {};
  let count = 0;
  for (const part of text.split(",")) {
    const eq = part.indexOf("=");
    if (eq < 0) throw malformed(`tag ${count + 1} has no "="`);
    const key = part.slice(0, eq).trim().toLowerCase();
    const value = part.slice(eq + 1).trim();
    const problem = tagProblem(key, value);
    if (problem !== null) throw malformed(`tag ${count + 1}: ${problem}`);
    if (Object.hasOwn(tags, key)) throw malformed(`the tag ${key} is given twice`);
    if (++count > MAX_TAGS) throw malformed(`at most ${MAX_TAGS} tags`);
    tags[key] = value;
  }
  return tags;
}

/** A key's default tags checked and normalised (keys lowered), for the admin and dashboard APIs; throws 400 naming `param`. */
export function checkedDefaultTags(tags: Record<string, string>, param: string): Tags {
  const out: Record<string, string> = {};
  for (const [rawKey, rawValue] of Object.entries(tags)) {
    const key = rawKey.trim().toLowerCase();
    const value = rawValue.trim();
    const problem = tagProblem(key, value);
    if (problem !== null) throw new GatewayError("invalid_request", `${param}: ${problem}`, { param });
    if (Object.hasOwn(out, key)) throw new GatewayError("invalid_request", `${param}: the tag ${key} is given twice`, { param });
    out[key] = value;
  }
  if (Object.keys(out).length > MAX_TAGS) throw new GatewayError("invalid_request", `${param}: at most ${MAX_TAGS} tags`, { param });
  return out;
}

/** The request's tags: the key's defaults over the header's (a default wins); at most MAX_TAGS in all. */
export function mergeTags(keyDefaults: Tags | null, requested: Tags): Tags {
  if (keyDefaults === null || Object.keys(keyDefaults).length === 0) return requested;
  const merged = { ...requested, ...keyDefaults };
  if (Object.keys(merged).length > MAX_TAGS) throw malformed(`with the key's ${Object.keys(keyDefaults).length} default tags, at most ${MAX_TAGS} tags in all`);
  return merged;
}

/** The tags as "key=value" texts, sorted: how the ledger, the request log and the budget scopes name them. */
export function tagTexts(tags: Tags): string[] {
  return Object.keys(tags)
    .sort()
    .map((key) => `${key}=${tags[key]}`);
}

/** A "key=value" text checked (an admin API's tag budget); throws 400 naming `param`. */
export function checkedTagText(text: string, param: string): string {
  const eq = text.indexOf("=");
  const problem = eq < 0 ? 'a tag is "key=value"' : tagProblem(text.slice(0, eq).trim().toLowerCase(), text.slice(eq + 1).trim());
  if (problem !== null) throw new GatewayError("invalid_request", `${param}: ${problem}`, { param });
  return `${text.slice(0, eq).trim().toLowerCase()}=${text.slice(eq + 1).trim()}`;
}

/** The budget scope of a tag's budget: gateway-wide ("tag:project=atlas") or one account's ("tag@acct_1:project=atlas"). */
export function tagScope(tag: string, accountId: string | null): string {
  return accountId === null ? `tag:${tag}` : `tag@${accountId}:${tag}`;
}
