import { describe, expect, it } from "vitest";
import { encodeSseEvent, SseParser } from "../core/sse.js";
import { createScrubber, REDACTED, scrubHeaders } from "./scrub.js";

const SECRET_A = "sk-canary-AAAA1111BBBB2222CCCC3333dddd";
const SECRET_B = "plaincanary7Qx9vLm2"; // no recognisable shape: only the configured list finds it
const SECRET_C = "cnry/with+odd=chars&4f9"; // changes when URL-encoded
const HOSTS = ["https://api.upstream-canary.example/v1", "127.0.0.1:43567", "http://llm-box.internal:8080"];

const CANARIES = [
  SECRET_A,
  SECRET_B,
  SECRET_C,
  encodeURIComponent(SECRET_C),
  "upstream-canary",
  "43567",
  "llm-box",
  // Unconfigured shapes planted below.
  "sk-proj-Zq81",
  "sk-ant-api03",
  "AIzaSyD",
  "xai-7Hh",
  "gsk_8Jk",
  "org-4Kp",
  "proj_9Tn",
  "req_011C",
  "eyJhbGci",
  "d41d8cd98f00b204e9800998ecf8427e",
  "5f0c2b1e-7a4d-4c1b-9b7e-2c8e1f3a6d90",
  "hunter2pass",
  "abcd",
];

const scrubber = createScrubber({ secrets: [SECRET_A, SECRET_B, SECRET_C, "short"], hosts: HOSTS });

function expectClean(value: unknown): void {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  for (const canary of CANARIES) expect(text, `leaked ${canary}`).not.toContain(canary);
}

describe("scrubText", () => {
  it.each([
    ["configured secret", `Invalid key ${SECRET_A}.`],
    ["shapeless configured secret", `auth failed for ${SECRET_B}`],
    ["URL-encoded configured secret", `GET /v1/x?k=${encodeURIComponent(SECRET_C)} failed`],
    ["raw configured secret with symbols", `secret=${SECRET_C}`],
    ["OpenAI project key", "Incorrect API key provided: sk-proj-Zq81abcdEFGH1234ijklMNOP5678qrstUVWX."],
    ["masked OpenAI key", "Incorrect API key provided: sk-proj-Zq81********************************abcd."],
    ["Anthropic key", "x-api-key sk-ant-api03-Qw3rTy-uIoP4sDfG5hJkL6zXcV7bNm8Qw3rTy-AA is invalid"],
    ["Google key", "API key not valid: AIzaSyD4-9gkQ2lX0vWc8mYpRz3tUaBnE7fHjKs"],
    ["Google key in query", "https://example.com/v1beta/models?key=AIzaSyD4-9gkQ2lX0vWc8mYpRz3tUaBnE7fHjKs"],
    ["xAI key", "Incorrect API key xai-7Hh2kLm9Pq4Rs6Tv8Wx0Yz1Ab3Cd5Ef"],
    ["Groq key", "bad key gsk_8Jk2Lm4Nn6Pp8Qq0Rr2Ss4Tt6Uu8Vv"],
    ["Bearer JWT", "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl"],
    ["org id", "You are not a member of organization org-4Kp9xWz2Lm7Qr8Ts1Vb3Nc5D."],
    ["project id", "Project proj_9Tn2Lk4Mq6Wz8Xc0Vb1N does not have access"],
    ["OpenAI request id", "Please include the request ID req_011CUkPbMx2E8Abc and more"],
    ["hex token in query", "callback?token=d41d8cd98f00b204e9800998ecf8427e&x=1"],
    ["UUID after request id", "Request ID: 5f0c2b1e-7a4d-4c1b-9b7e-2c8e1f3a6d90"],
    ["UUID after request_id JSON", '{"request_id":"5f0c2b1e-7a4d-4c1b-9b7e-2c8e1f3a6d90"}'],
    ["UUID after 'request id is'", "the request id is 5f0c2b1e-7a4d-4c1b-9b7e-2c8e1f3a6d90."],
    ["base URL", "connect ECONNREFUSED https://api.upstream-canary.example/v1/chat/completions"],
    ["bare hostname", "getaddrinfo ENOTFOUND api.upstream-canary.example"],
    ["upper-case hostname", "HOST API.UPSTREAM-CANARY.EXAMPLE unreachable"],
    ["IP:port", "connect ECONNREFUSED 127.0.0.1:43567"],
    ["internal host with path", "fetch http://llm-box.internal:8080/v1/models failed"],
    ["URL credentials", "proxy https://admin:hunter2pass@example.com/x"],
    ["x-api-key header echo", "x-api-key: abcd0123efgh4567ijkl"],
  ])("removes %s", (_name, text) => {
    const out = scrubber.scrubText(text);
    expectClean(out);
    expect(out).toContain(REDACTED);
  });

  it("keeps the harmless part of the text", () => {
    expect(scrubber.scrubText(`Invalid key ${SECRET_A}.`)).toBe(`Invalid key ${REDACTED}.`);
    expect(scrubber.scrubText("Authorization: Bearer abc.def-123456")).toBe(`Authorization: Bearer ${REDACTED}`);
    expect(scrubber.scrubText("see https://api.upstream-canary.example/v1/models?x=1 now")).toBe(`see https://${REDACTED} now`);
    expect(scrubber.scrubText("connect 127.0.0.1:43567, retrying")).toBe(`connect ${REDACTED}, retrying`);
  });

  it.each([
    "sk",
    "key",
    "the sk- prefix and an sk-short token",
    "gpt-4o-mini",
    "claude-3-5-sonnet-20241022",
    "gemini-1.5-pro-002",
    "The task-based plan is risk-free; ask-me-anything sessions help.",
    "Use Bearer authentication; the Authorization header holds a Bearer token.",
    "sorted(items, key=operator.itemgetter(1)) and dict(key=value)",
    'client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])',
    '{"api_key": "YOUR_API_KEY"}',
    "The request was processed. Request IDs help support.",
    "Visit https://example.com/docs?page=2 for more.",
    "An org-wide policy for my_proj_files and req_small.",
    "Meeting at 10:30, ticket #4521, 3.14159 is pi.",
    "你好，世界。これは日本語です。",
    "The quick brown fox jumps over the lazy dog.",
    "",
  ])("leaves ordinary text unchanged: %s", (text) => {
    expect(scrubber.scrubText(text)).toBe(text);
  });

  // Real ids are 24+ characters, but upstream messages and mocks also show short ones.
  it.each([
    ["Rate limit reached for gpt-4o in organization org-abc123def456 on tokens per min", "org-abc123def456"],
    ["request req_0123456789ab failed", "req_0123456789ab"],
    ["project proj_9x8y7z6w5v denied", "proj_9x8y7z6w5v"],
    ["org-1234567890 and", "org-1234567890"],
    ["long ids without digits: org-abcdefghijklmnop", "org-abcdefghijklmnop"],
  ])("removes a short id with a digit: %s", (text, id) => {
    const out = scrubber.scrubText(text);
    expect(out).not.toContain(id);
    expect(out).toContain(REDACTED);
  });

  it.each([
    "An org-wide rollout, the org-structure chart and org-level settings.",
    "Call req_handler(req_body) and proj_management_tool; see req_v2 and org-2fa.",
    "def handle(req_params1, req_headers): pass",
    "proj_templates and proj_directory hold the files.",
  ])("keeps prose and code that only look like short ids: %s", (text) => {
    expect(scrubber.scrubText(text)).toBe(text);
  });

  it("never throws on odd input", () => {
    const odd = (value: unknown) => scrubber.scrubText(value as string);
    expect(odd(undefined)).toBe("");
    expect(odd(null)).toBe("");
    expect(odd(42)).toBe("42");
    expect(odd({ toString: () => SECRET_A })).toBe(REDACTED);
    expect(
      odd({
        toString: () => {
          throw new Error("no");
        },
      }),
    ).toBe("");
  });

  it("removes each part of a colon-separated AWS key (access key id, secret, session token) and the SigV4 signature", () => {
    const keyId = "EXAMPLEKEYID0CANARY1";
    const secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYCANARYKEY";
    const token = "IQoJb3JpZ2luX2VjCANARYTOKEN+/abc==";
    const s = createScrubber({ secrets: [`${keyId}:${secret}:${token}`], hosts: [] });
    const signature = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7";
    const leaked = [
      `The security token included in the request is invalid: ${token}`,
      `Credential=${keyId}/20261124/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=${signature}`,
      `{"message":"secret ${secret} rejected"}`,
      "The access key AKIAIOSFODNN7CANARY1 does not exist; neither does ASIAIOSFODNN7CANARY2.",
    ].map((text) => s.scrubText(text));
    for (const canary of [keyId, secret, token, signature, "AKIAIOSFODNN7CANARY1", "ASIAIOSFODNN7CANARY2"]) expect(leaked.join("\n")).not.toContain(canary);
    expect(s.scrubText("ASIAN markets and AKIA are words; Signature=short stays")).toBe("ASIAN markets and AKIA are words; Signature=short stays");
  });

  it("ignores empty and very short configured secrets", () => {
    const s = createScrubber({ secrets: ["", "short", "  "], hosts: [""] });
    expect(s.scrubText("a short sentence")).toBe("a short sentence");
  });

  it("accepts hosts given as bare host, host:port, IPv6 URL and garbage", () => {
    const s = createScrubber({ secrets: [], hosts: ["gw.example.net", "http://[::1]:9000/v1", "::not a url::"] });
    expect(s.scrubText("at gw.example.net:443/v1 and http://[::1]:9000/v1/chat")).toBe(`at ${REDACTED} and http://${REDACTED}`);
  });

  it("stays fast on a large base64 payload and does not corrupt it", () => {
    const bytes = Buffer.alloc(1_500_000);
    let state = 0x9e3779b9;
    for (let i = 0; i < bytes.length; i++) {
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      bytes[i] = state & 0xff;
    }
    // "AIza" right after "/" or "+" is base64 data, not a key.
    const b64 = `AIzb${bytes.toString("base64")}/AIza${"Q".repeat(40)}+AIza${"Z".repeat(40)}`;
    const started = performance.now();
    const same = scrubber.scrubText(b64) === b64;
    const elapsed = performance.now() - started;
    expect(same).toBe(true);
    expect(elapsed).toBeLessThan(500);
  });
});

describe("scrubJson", () => {
  const upstreamError = {
    error: {
      message: `Incorrect API key provided: ${SECRET_A}. Request to https://api.upstream-canary.example/v1 failed.`,
      type: "invalid_request_error",
      param: null,
      code: "invalid_api_key",
      details: [{ url: "http://127.0.0.1:43567/v1/chat?key=d41d8cd98f00b204e9800998ecf8427e" }, [[[{ deep: SECRET_B }]]]],
    },
    organization: "org-4Kp9xWz2Lm7Qr8Ts1Vb3Nc5D",
    "openai-organization": "acme-canary",
    project: "proj_9Tn2Lk4Mq6Wz8Xc0Vb1N",
    project_id: "proj_9Tn2Lk4Mq6Wz8Xc0Vb1N",
    request_id: "req_011CUkPbMx2E8AbcDefGhi",
    requestId: "5f0c2b1e-7a4d-4c1b-9b7e-2c8e1f3a6d90",
    api_key: "abcd",
    system_fingerprint: "fp_44709d6fcb",
    [SECRET_B]: "secret as a key name",
  };

  it("scrubs nested strings and key names, drops identifying keys, keeps the rest", () => {
    const out = scrubber.scrubJson(upstreamError) as Record<string, unknown>;
    expectClean(out);
    expect(Object.keys(out).sort()).toEqual([REDACTED, "api_key", "error", "system_fingerprint"].sort());
    expect(out.api_key).toBe(REDACTED);
    expect(out.system_fingerprint).toBe("fp_44709d6fcb");
    expect(out.error).toMatchObject({ type: "invalid_request_error", param: null, code: "invalid_api_key" });
    expect(JSON.stringify(upstreamError)).toContain(SECRET_A); // the input is not mutated
  });

  it("returns the same reference when nothing needs scrubbing", () => {
    const chunk = JSON.parse(
      '{"id":"chatcmpl-9x","object":"chat.completion.chunk","created":1760000000,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":{"content":[{"token":"Hello","logprob":-0.1,"bytes":[72]}]},"finish_reason":null}],"usage":null}',
    ) as unknown;
    expect(scrubber.scrubJson(chunk)).toBe(chunk);
  });

  it("scrubs canaries inside SSE event data, parsed or raw", () => {
    const chunk = { choices: [{ index: 0, delta: { content: `here: ${SECRET_A} at 127.0.0.1:43567` } }] };
    const frame = encodeSseEvent(JSON.stringify(chunk));
    const [event] = new SseParser().push(new TextEncoder().encode(frame));
    expect(event).toBeDefined();
    const parsed = scrubber.scrubJson(JSON.parse(event!.data));
    expectClean(parsed);
    expect(parsed).toEqual({ choices: [{ index: 0, delta: { content: `here: ${REDACTED} at ${REDACTED}` } }] });
    const raw = scrubber.scrubText(frame);
    expectClean(raw);
    expect(JSON.parse(new SseParser().push(new TextEncoder().encode(raw))[0]!.data)).toEqual(parsed);
  });

  it("keeps client-named keys of schemas and metadata, but still scrubs their values", () => {
    const echo = {
      tools: [{ parameters: { properties: { project: { type: "string", description: SECRET_B } } } }],
      metadata: { organization: "mine" },
    };
    expect(scrubber.scrubJson(echo)).toEqual({
      tools: [{ parameters: { properties: { project: { type: "string", description: REDACTED } } } }],
      metadata: { organization: "mine" },
    });
  });

  it("keeps a JSON __proto__ key as data", () => {
    const value = JSON.parse(`{"__proto__":{"x":"${SECRET_B}"},"a":"${SECRET_B}"}`) as unknown;
    const out = scrubber.scrubJson(value) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(JSON.stringify(out)).toBe(`{"__proto__":{"x":"${REDACTED}"},"a":"${REDACTED}"}`);
  });

  it("handles primitives, very deep nesting and cycles without throwing", () => {
    expect(scrubber.scrubJson(SECRET_A)).toBe(REDACTED);
    for (const value of [null, 1, true, undefined]) expect(scrubber.scrubJson(value)).toBe(value);

    let deep: unknown = SECRET_A;
    for (let i = 0; i < 100_000; i++) deep = i % 2 ? [deep] : { k: deep };
    let out = scrubber.scrubJson(deep);
    for (let i = 0; i < 100_000; i++) out = Array.isArray(out) ? out[0] : (out as { k: unknown }).k;
    expect(out).toBe(REDACTED);

    const cyclic: Record<string, unknown> = { a: SECRET_B };
    let node = cyclic;
    for (let i = 0; i < 100; i++) node = node.next = { a: 1 };
    node.next = cyclic;
    expect(() => scrubber.scrubJson(cyclic)).not.toThrow();
  });
});

describe("scrubHeaders", () => {
  it("keeps only the allowlist, with names lower-cased", () => {
    const out = scrubHeaders({
      "Content-Type": "text/event-stream; charset=utf-8",
      "Retry-After": "20",
      "retry-after-ms": "1500",
      "set-cookie": ["__cf_bm=abc; path=/"],
      "x-request-id": "req_011CUkPbMx2E8AbcDefGhi",
      "request-id": "req_1",
      "openai-organization": "acme",
      "openai-project": "proj_1",
      "anthropic-organization-id": "uuid",
      "openai-processing-ms": "120",
      "x-ratelimit-remaining-requests": "99",
      "cf-ray": "8a1b",
      server: "cloudflare",
      via: "1.1 google",
      "content-length": "10",
      "content-encoding": "gzip",
      "x-empty": undefined,
    });
    expect(out).toEqual({ "content-type": "text/event-stream; charset=utf-8", "retry-after": "20", "retry-after-ms": "1500" });
  });

  it("drops allowlisted headers whose value has an unexpected shape", () => {
    expect(scrubHeaders({ "retry-after": "soon, see req_abc", "content-type": "text/plain\r\nx: y" })).toEqual({});
    expect(scrubHeaders({ "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT", "content-type": ["application/json", "text/html"] })).toEqual({
      "retry-after": "Wed, 21 Oct 2015 07:28:00 GMT",
      "content-type": "application/json",
    });
  });
});

describe("isCleanJsonText (pass-through chunks sent without parsing)", () => {
  const chunk = (content: string, extra = "") =>
    `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m"${extra},"choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]}`;

  it("is true for an ordinary chunk", () => {
    expect(scrubber.isCleanJsonText(chunk("Hello there"))).toBe(true);
    expect(scrubber.isCleanJsonText('{"usage":null,"system_fingerprint":"fp_44709d6fcb"}')).toBe(true);
  });

  it.each([
    ["a configured secret", chunk(`key ${SECRET_A}`)],
    ["a shapeless configured secret", chunk(`x ${SECRET_B} y`)],
    ["a secret hidden by a \\u escape", chunk(SECRET_A.replace("-", "\\u002d"))],
    ["a host hidden by an escaped slash", chunk("see http:\\/\\/llm-box.internal:8080\\/v1")],
    ["any backslash", chunk('a \\"quoted\\" word')],
    ["a configured host", chunk("from 127.0.0.1:43567")],
    ["an upper-case host", chunk("HOST API.UPSTREAM-CANARY.EXAMPLE")],
    ["a key shape", chunk("sk-proj-Zq81abcdEFGH1234ijklMNOP5678qrstUVWX")],
    ["a Bearer token", chunk("Bearer eyJhbGciOiJIUzI1NiJ9")],
    ["a dropped key", chunk("x", ',"organization":"acme"')],
    ["a dropped key in another case", chunk("x", ',"Project_ID":"p1"')],
    ["a blanked key in another case", chunk("x", ',"AUTHORIZATION":"x"')],
    ["a request id key", chunk("x", ',"Request_Id":"abc"')],
  ])("is false for text with %s", (_name, text) => {
    expect(scrubber.isCleanJsonText(text)).toBe(false);
  });

  it("agrees with scrubJson: whenever the text is clean, scrubbing the parsed value changes nothing", () => {
    const pieces = [
      "Hello",
      "sk-",
      SECRET_A,
      SECRET_B,
      "organization",
      "Org_Id",
      "api_key",
      "127.0.0.1:43567",
      "llm-box.internal",
      "req_",
      "Bearer x",
      "://",
      "key=",
      "plain text",
      "metadata",
      "é",
    ];
    let clean = 0;
    for (let i = 0; i < pieces.length; i++) {
      for (let j = 0; j < pieces.length; j++) {
        for (const text of [chunk(`${pieces[i]} ${pieces[j]}`), `{"${pieces[i]}":"${pieces[j]}","n":1}`]) {
          const value: unknown = JSON.parse(text);
          if (!scrubber.isCleanJsonText(text)) continue;
          clean += 1;
          expect(scrubber.scrubJson(value), text).toBe(value);
          expectClean(text);
        }
      }
    }
    expect(clean).toBeGreaterThan(20); // the property was exercised, not vacuous
  });
});
