// The last stage before a client sees upstream output: removes upstream credentials, hosts and
// account identifiers from text, JSON and headers. contract item 9: a caller that catches an error
// here must send internal_error instead of the unscrubbed body.

export const REDACTED = "[redacted]";

export interface ScrubberOptions {
  /** Every configured upstream key. */
  secrets: readonly string[];
  /** Upstream base URLs or hosts: "https://api.openai.com/v1", "127.0.0.1:43567", "localhost". */
  hosts: readonly string[];
}

export interface Scrubber {
  scrubText(text: string): string;
  /** Copy-on-write: returns the same reference when nothing needed scrubbing. */
  scrubJson(value: unknown): unknown;
  /**
   * True when JSON text certainly needs no scrubbing, so it may be sent as it is without being parsed:
   * it holds no backslash (so every key and string in it appears verbatim in the text), none of the
   * pre-check's triggers, and no key that scrubJson drops or blanks, in any letter case. False means
   * "parse it and scrubJson it", not that something was found.
   */
  isCleanJsonText(text: string): boolean;
}

/** A configured "secret" shorter than this is not a credential and would shred ordinary text. */
export const MIN_SECRET_LENGTH = 8;

// One alternative of the combined shape RegExp. Every alternative starts with a literal so the
// engine can skip ahead quickly (leading lookbehinds made it test every position: ~200 ms for a
// 2 MB base64 image). `secret` is the rule's only capture group and ends the match; the text
// before it (e.g. "Bearer ") is kept. A match right after a `notAfter` character is not a token
// start ("task-…", base64) and is skipped. `triggers` feed the pre-check: every match of the rule
// must contain one of them exactly, or the rule never runs (each rule has a removal test).
interface Rule {
  source: string;
  notAfter?: RegExp;
  triggers: readonly string[];
}

const TOKEN_START = /[A-Za-z0-9_-]/;
const TOKEN = "A-Za-z0-9._~+/=_-";

const SHAPE_RULES: readonly Rule[] = [
  // OpenAI (sk-, sk-proj-, sk-svcacct-), Anthropic (sk-ant-), OpenRouter (sk-or-); masked forms
  // such as "sk-proj-****abcd" first, else the plain branch would stop at the mask.
  { source: "(sk-(?:[A-Za-z0-9_-]*(?:\\*{3,}|\\.{3}|…)[A-Za-z0-9_*-]*|[A-Za-z0-9_-]{20,}))", notAfter: TOKEN_START, triggers: ["sk-"] },
  // Also not after "+" or "/": standard base64 (image data) can hold "AIza" after those.
  { source: "(AIza[A-Za-z0-9_-]{30,})", notAfter: /[A-Za-z0-9_+/-]/, triggers: ["AIza"] },
  { source: "(xai-[A-Za-z0-9]{20,})", notAfter: TOKEN_START, triggers: ["xai-"] },
  { source: "(gsk_[A-Za-z0-9]{20,})", notAfter: TOKEN_START, triggers: ["gsk_"] },
  // Organisation, project and request ids: 16+ characters, or 10+ with a digit ("org-abc123def456",
  // "req_0123456789ab"). Prose and code stay: "org-wide", "org-structure", "req_handler", "req_v2".
  { source: "(org-(?:[A-Za-z0-9]{16,}|(?=[A-Za-z]*[0-9])[A-Za-z0-9]{10,}))", notAfter: TOKEN_START, triggers: ["org-"] },
  { source: "(proj_(?:[A-Za-z0-9]{16,}|(?=[A-Za-z]*[0-9])[A-Za-z0-9]{10,}))", notAfter: TOKEN_START, triggers: ["proj_"] },
  { source: "(req_(?:[A-Za-z0-9]{16,}|(?=[A-Za-z]*[0-9])[A-Za-z0-9]{10,}))", notAfter: TOKEN_START, triggers: ["req_"] },
  // "Bearer <token>": the token needs a non-letter or 24+ letters, so "Bearer authentication" stays.
  {
    source: `(?:Bearer|bearer|BEARER|Basic|basic|BASIC)\\s{1,4}((?=[${TOKEN}]{8})(?:[A-Za-z]*[0-9._~+/=_-][${TOKEN}]*|[A-Za-z]{24,}))`,
    notAfter: /[A-Za-z0-9]/,
    triggers: ["Bearer", "bearer", "BEARER", "Basic", "basic", "BASIC"],
  },
  // Query parameters ?key=, &api_key=, token=, sig= (Azure SAS)… with a long value holding a digit.
  {
    source: "(?:api[_-]?key|apiKey|key|access_token|accessToken|token|sig|signature|secret|password)=((?=[A-Za-z._~+/%=-]*[0-9])[A-Za-z0-9._~+/%=-]{16,})",
    notAfter: TOKEN_START,
    triggers: ["key=", "Key=", "token=", "Token=", "sig=", "signature=", "secret=", "password="],
  },
  // Header or JSON echo of a key: `x-api-key: …`, `"api_key":"…"` (also JSON inside JSON). The
  // value needs a digit so code such as `"api_key": os.environ[…]` or a placeholder stays readable.
  {
    source: `(?:api|Api|API)[_-]?(?:key|Key|KEY)\\\\?["']?\\s{0,3}:\\s{0,3}\\\\?["']?((?=[A-Za-z._~+/=_-]*[0-9])[${TOKEN}]{8,})`,
    notAfter: /[A-Za-z0-9_]/,
    triggers: ["api", "Api", "API"],
  },
  // "request id: <uuid>", "request_id":"…", "Request ID is …".
  {
    source: "(?:request|Request|REQUEST)[ _-]?(?:id|Id|ID)\\\\?[\"']?\\s{0,3}[:=#]?\\s{0,3}\\\\?[\"']?(?:\\s?(?:is|was)\\s)?([A-Za-z0-9][A-Za-z0-9_-]{15,})",
    triggers: ["request", "Request", "REQUEST"],
  },
  // AWS access key ids (long-term AKIA…, temporary ASIA…) and SigV4 signatures ("Signature=<64 hex>").
  { source: "((?:AKIA|ASIA)[A-Z0-9]{16})(?![A-Za-z0-9])", notAfter: TOKEN_START, triggers: ["AKIA", "ASIA"] },
  { source: "Signature=([0-9a-f]{64})", triggers: ["Signature="] },
  // Credentials in any URL: scheme://user:pass@host.
  { source: "://([^\\s/?#@\"'<>\\\\]{1,256})(?=@)", triggers: ["://"] },
];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&");
}

// Hostnames match case-insensitively; the combined RegExp has no "i" flag (key shapes are case-exact).
function caseless(text: string): string {
  let out = "";
  for (const ch of text) {
    const lower = ch.toLowerCase();
    const upper = ch.toUpperCase();
    out += lower !== upper && lower.length === 1 && upper.length === 1 ? `[${lower}${upper}]` : escapeRegExp(ch);
  }
  return out;
}

function secretForms(secret: string): string[] {
  const forms = new Set([secret]);
  forms.add(encodeURIComponent(secret));
  forms.add(JSON.stringify(secret).slice(1, -1)); // as it appears inside raw JSON text
  return [...forms];
}

function hostnamesOf(host: string): string[] {
  const trimmed = host.trim();
  if (trimmed === "") return [];
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`);
    const names = [url.hostname];
    if (url.hostname.startsWith("[")) names.push(url.hostname.slice(1, -1)); // IPv6 without brackets
    return names.filter((name) => name !== "");
  } catch {
    return [trimmed.toLowerCase()];
  }
}

/**
 * The configured secrets long enough to be credentials, each with its colon-separated parts: a key
 * that holds several credentials (AWS "ACCESS_KEY_ID:SECRET_ACCESS_KEY:SESSION_TOKEN") leaks one
 * part at a time.
 */
function secretValues(secrets: readonly string[]): string[] {
  const values = new Set<string>();
  for (const secret of secrets) {
    const value = typeof secret === "string" ? secret.trim() : "";
    for (const part of value.includes(":") ? [value, ...value.split(":")] : [value]) if (part.length >= MIN_SECRET_LENGTH) values.add(part);
  }
  return [...values];
}

function secretPattern(secrets: readonly string[]): RegExp | null {
  const forms = new Set<string>();
  for (const value of secretValues(secrets)) for (const form of secretForms(value)) forms.add(form);
  if (forms.size === 0) return null;
  // Longest first, so a secret that contains another is removed whole.
  const sorted = [...forms].sort((a, b) => b.length - a.length);
  return new RegExp(sorted.map(escapeRegExp).join("|"), "g");
}

// The whole URL goes: host, port, path and query (a path can name a deployment); "https://" stays.
// The pattern ignores case, but the pre-check only knows the lower- and upper-case spellings.
function hostRule(hosts: readonly string[]): Rule | null {
  const names = [...new Set(hosts.flatMap((host) => (typeof host === "string" ? hostnamesOf(host) : [])))];
  if (names.length === 0) return null;
  names.sort((a, b) => b.length - a.length);
  return {
    source: `((?:${names.map(caseless).join("|")})(?![A-Za-z0-9_-])(?::\\d{1,5})?(?:[/?#][^\\s"'<>\\\\]*)?)`,
    notAfter: TOKEN_START,
    triggers: names.flatMap((name) => [...new Set([name, name.toUpperCase()])]),
  };
}

export function createScrubber(options: ScrubberOptions): Scrubber {
  const secrets = secretPattern(options.secrets);
  const host = hostRule(options.hosts);
  const rules = host ? [host, ...SHAPE_RULES] : [...SHAPE_RULES];
  const triggers = [...rules.flatMap((rule) => rule.triggers), ...(secrets ? secretTriggers(options.secrets) : [])];
  const precheck = new RegExp([...new Set(triggers)].map(escapeRegExp).join("|"));
  const shapes = new RegExp(rules.map((rule) => rule.source).join("|"), "g");

  const scrubShapes = (text: string): string => {
    shapes.lastIndex = 0;
    let out = "";
    let last = 0;
    for (let match = shapes.exec(text); match !== null; match = shapes.exec(text)) {
      let group = 1;
      while (match[group] === undefined && group < rules.length) group++;
      const rule = rules[group - 1]!;
      const before = match.index > 0 ? text[match.index - 1]! : "";
      if (rule.notAfter && before !== "" && rule.notAfter.test(before)) {
        shapes.lastIndex = match.index + 1;
        continue;
      }
      const end = match.index + match[0].length;
      out += text.slice(last, end - (match[group] ?? match[0]).length) + REDACTED;
      last = end;
    }
    return last === 0 ? text : out + text.slice(last);
  };

  const scrubText = (input: string): string => {
    const text = toText(input);
    if (!precheck.test(text)) return text;
    // Configured secrets go in their own pass first: a shape match that starts before a secret and
    // stops inside it (its character class ends early) would otherwise leave the secret's tail.
    return scrubShapes(secrets ? text.replace(secrets, REDACTED) : text);
  };

  return {
    scrubText,
    scrubJson: (value) => walkJson(value, scrubText),
    isCleanJsonText: (text) => !text.includes("\\") && !precheck.test(text) && !SENSITIVE_KEY_TEXT.test(text),
  };
}

// A secret is matched exactly, so its first 8 characters (every form) are enough to trigger.
function secretTriggers(secrets: readonly string[]): string[] {
  return secretValues(secrets).flatMap((secret) => secretForms(secret).map((form) => form.slice(0, MIN_SECRET_LENGTH)));
}

// Keys whose value identifies the upstream account or request: dropped from JSON.
const DROP_KEYS = new Set([
  "organization",
  "openai-organization",
  "organization_id",
  "org_id",
  "project",
  "project_id",
  "openai-project",
  "request_id",
  "requestid",
  "anthropic-organization-id",
]);
// Keys whose value is a credential whatever it looks like: kept, value blanked.
const BLANK_KEYS = new Set(["api_key", "apikey", "api-key", "x-api-key", "authorization"]);

// Maps whose key names the client chose (a JSON schema's `properties`, echoed `metadata`): a
// property called "project" there is the client's data, not upstream identity. Values are still scrubbed.
const USER_KEY_MAPS = new Set(["properties", "metadata"]);

type KeyAction = "keep" | "drop" | "blank";

// Any of those keys, anywhere in raw JSON text, in any case: such text is never "clean".
const SENSITIVE_KEY_TEXT = new RegExp([...DROP_KEYS, ...BLANK_KEYS].map(escapeRegExp).join("|"), "i");

function keyAction(key: string): KeyAction {
  const lower = key.toLowerCase();
  if (DROP_KEYS.has(lower)) return "drop";
  if (BLANK_KEYS.has(lower)) return "blank";
  return "keep";
}

function toText(input: unknown): string {
  if (typeof input === "string") return input;
  if (input === null || input === undefined) return "";
  try {
    return String(input);
  } catch {
    return "";
  }
}

type Container = unknown[] | Record<string, unknown>;

interface Frame {
  src: Container;
  keys: string[] | null; // null for arrays
  i: number;
  out: Container | null; // created on the first change (copy-on-write)
  key: string; // output key of the entry being walked
  userKeys: boolean; // a map whose key names the client chose; see USER_KEY_MAPS
}

function isContainer(value: unknown): value is Container {
  return typeof value === "object" && value !== null;
}

function frameOf(src: Container, userKeys: boolean): Frame {
  return { src, keys: Array.isArray(src) ? null : Object.keys(src), i: 0, out: null, key: "", userKeys };
}

function entry(frame: Frame, index: number): unknown {
  return frame.keys ? (frame.src as Record<string, unknown>)[frame.keys[index]!] : (frame.src as unknown[])[index];
}

function setKey(target: Record<string, unknown>, key: string, value: unknown): void {
  // A JSON "__proto__" key is an own property; plain assignment would change the prototype instead.
  if (key === "__proto__") Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

function startCopy(frame: Frame): void {
  if (frame.out) return;
  if (!frame.keys) {
    frame.out = (frame.src as unknown[]).slice(0, frame.i);
    return;
  }
  // Everything before i was kept unchanged, or the copy would already exist.
  const out: Record<string, unknown> = {};
  for (let j = 0; j < frame.i; j++) setKey(out, frame.keys[j]!, entry(frame, j));
  frame.out = out;
}

function put(frame: Frame, value: unknown): void {
  if (!frame.out) {
    const renamed = frame.keys !== null && frame.key !== frame.keys[frame.i];
    if (renamed || value !== entry(frame, frame.i)) startCopy(frame);
  }
  if (frame.out) {
    if (Array.isArray(frame.out)) frame.out.push(value);
    else setKey(frame.out, frame.key, value);
  }
  frame.i++;
}

const CYCLE_CHECK_DEPTH = 64;

// Iterative, so deeply nested JSON cannot overflow the call stack. Any Scrubber's scrubJson is
// this walk over its own scrubText (response-scrubber.ts builds one that way).
export function walkJson(root: unknown, scrubText: (text: string) => string): unknown {
  if (!isContainer(root)) return typeof root === "string" ? scrubText(root) : root;
  const stack: Frame[] = [frameOf(root, false)];
  let onPath: Set<object> | null = null; // only built for deep input, to stop on cycles
  for (;;) {
    const frame = stack[stack.length - 1]!;
    const length = frame.keys ? frame.keys.length : (frame.src as unknown[]).length;
    if (frame.i >= length) {
      stack.pop();
      onPath?.delete(frame.src);
      const done = frame.out ?? frame.src;
      const parent = stack[stack.length - 1];
      if (!parent) return done;
      put(parent, done);
      continue;
    }
    let child: unknown;
    if (frame.keys) {
      const key = frame.keys[frame.i]!;
      const action = frame.userKeys ? "keep" : keyAction(key);
      if (action === "drop") {
        startCopy(frame);
        frame.i++;
        continue;
      }
      frame.key = scrubText(key);
      child = action === "blank" ? REDACTED : entry(frame, frame.i);
    } else {
      child = entry(frame, frame.i);
    }
    if (isContainer(child)) {
      if (stack.length >= CYCLE_CHECK_DEPTH) {
        onPath ??= new Set(stack.map((f) => f.src));
        if (onPath.has(child)) {
          put(frame, null);
          continue;
        }
        onPath.add(child);
      }
      const key = frame.keys ? frame.keys[frame.i]! : "";
      stack.push(frameOf(child, USER_KEY_MAPS.has(key) && !Array.isArray(child)));
      continue;
    }
    put(frame, typeof child === "string" ? scrubText(child) : child);
  }
}

// Upstream response headers a client may see. Everything else is dropped: x-request-id /
// request-id, openai-organization, openai-project, anthropic-organization-id, set-cookie, cf-ray,
// server and via identify the upstream, its account or its CDN. x-ratelimit-* is dropped too: it
// reveals the upstream account's tier and remaining quota, and it describes one upstream key while
// the gateway fails over across several. openai-processing-ms names the vendor. content-length and
// content-encoding no longer match once the body is decoded and scrubbed.
// Kept: content-type (clients need it), retry-after (the contract: preserved on 429) and retry-after-ms
// (the OpenAI SDK honours it); each value is checked against a strict shape.
const ALLOWED_HEADERS: Readonly<Record<string, RegExp>> = {
  "content-type": /^[A-Za-z0-9!#$&^_.+-]{1,64}\/[A-Za-z0-9!#$&^_.+-]{1,64}(?:\s*;\s*[A-Za-z0-9_.-]{1,32}=(?:[A-Za-z0-9_.+-]{1,64}|"[^"\r\n\\]{0,64}"))*$/,
  "retry-after": /^(?:\d{1,10}|[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT)$/,
  "retry-after-ms": /^\d{1,10}(?:\.\d{1,6})?$/,
};

export function scrubHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, raw] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    const shape = Object.hasOwn(ALLOWED_HEADERS, lower) ? ALLOWED_HEADERS[lower] : undefined;
    if (!shape) continue;
    const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
    if (typeof value === "string" && shape.test(value)) out[lower] = value;
  }
  return out;
}
