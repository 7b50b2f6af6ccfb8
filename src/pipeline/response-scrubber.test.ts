import { describe, expect, it } from "vitest";
import { scrubJsonText } from "./relay.js";
import { identifiersIn, scrubberForResponse } from "./response-scrubber.js";
import { createScrubber, REDACTED } from "./scrub.js";

const base = createScrubber({ secrets: ["sk-canary-AAAA1111BBBB2222CCCC3333dddd"], hosts: ["127.0.0.1:43567"] });

// Values no pattern of the base scrubber recognises on its own.
const UUID = "5f0c2b1e-7a4d-4c1b-9b7e-2c8e1f3a6d90";
const ORG = "user-q7x2k9m4p1z8";
const RAY = "8a1b2c3d4e5f6789";
const HEADERS = {
  "openai-organization": ORG,
  "x-request-id": UUID,
  "cf-ray": `${RAY}-SJC`,
  "content-type": "application/json",
  "retry-after": "20",
};

describe("identifiersIn", () => {
  it("reads the ids of OpenAI, Anthropic, Azure, AWS, Google and Cloudflare headers", () => {
    const ids = identifiersIn({
      "openai-organization": "org-abc123def456",
      "openai-project": "proj_a1b2c3d4",
      "x-request-id": "req_0123456789ab",
      "request-id": "req_011CUkPbMx2E",
      "anthropic-organization-id": "0b1e2f3a-aaaa-bbbb-cccc-0123456789ab",
      "apim-request-id": "11111111-2222-3333-4444-555555555555",
      "x-ms-request-id": "ms-req-0042",
      "x-ms-client-request-id": "client-0043",
      "x-amzn-requestid": "amzn-0044-id",
      "x-amz-request-id": "AMZ0045XYZ",
      "x-amzn-trace-id": "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1",
      "x-goog-request-id": "goog-0046-id",
      "CF-Ray": "8a1b2c3d4e5f6789-SJC",
      "content-type": "application/json; charset=utf-8",
      "x-ratelimit-remaining-requests": "9999999999",
      date: "Wed, 21 Oct 2015 07:28:00 GMT",
    });
    expect(new Set(ids)).toEqual(
      new Set([
        "org-abc123def456",
        "proj_a1b2c3d4",
        "req_0123456789ab",
        "req_011CUkPbMx2E",
        "0b1e2f3a-aaaa-bbbb-cccc-0123456789ab",
        "11111111-2222-3333-4444-555555555555",
        "ms-req-0042",
        "client-0043",
        "amzn-0044-id",
        "AMZ0045XYZ",
        "1-5759e988-bd862e3fe1be46a994272793",
        "53995c3f42cd8ad8",
        "goog-0046-id",
        "8a1b2c3d4e5f6789-SJC",
        "8a1b2c3d4e5f6789",
      ]),
    );
  });

  it("reads Google's trace id out of x-cloud-trace-context (TRACE/SPAN;o=1)", () => {
    expect(identifiersIn({ "x-cloud-trace-context": "105445aa7843bc8bf206b12000100000/1;o=1" })).toEqual(["105445aa7843bc8bf206b12000100000"]);
  });

  it("ignores short and word-like values, so ordinary words are not redacted", () => {
    expect(
      identifiersIn({ "x-request-id": "undefined", "request-id": "-", "openai-organization": "personal", "openai-project": "abc-12", "x-goog-request-id": ["STANDARD"] }),
    ).toEqual([]);
  });

  it("is bounded whatever the upstream sends", () => {
    const many = Array.from({ length: 100 }, (_, i) => `id-${String(i).padStart(8, "0")}`).join(", ");
    expect(identifiersIn({ "x-request-id": many, "request-id": `r-${"9".repeat(10_000)}` })).toHaveLength(16);
  });
});

describe("scrubberForResponse", () => {
  it("is the base scrubber itself when the headers name no id", () => {
    expect(scrubberForResponse(base, { "content-type": "text/event-stream", "retry-after": "1" })).toBe(base);
    expect(scrubberForResponse(base, {})).toBe(base);
  });

  it("removes the header values from text, JSON strings and key names", () => {
    const scrubber = scrubberForResponse(base, HEADERS);
    const text = `Rate limit reached in ${ORG}; request ${UUID}, ray ${RAY}, see 127.0.0.1:43567.`;
    expect(scrubber.scrubText(text)).toBe(`Rate limit reached in ${REDACTED}; request ${REDACTED}, ray ${REDACTED}, see ${REDACTED}.`);
    const out = JSON.stringify(scrubber.scrubJson({ error: { message: text }, [UUID]: [ORG], organization: ORG, keep: "fine" }));
    for (const id of [UUID, ORG, RAY, "43567"]) expect(out).not.toContain(id);
    expect(out).toContain('"keep":"fine"');
    expect(out).not.toContain("organization");
  });

  it("leaves values without ids as they are (copy-on-write)", () => {
    const scrubber = scrubberForResponse(base, HEADERS);
    const value = { choices: [{ delta: { content: "Hello" } }] };
    expect(scrubber.scrubJson(value)).toBe(value);
    expect(scrubber.scrubText("Hello there")).toBe("Hello there");
  });

  it("defeats the pass-through check: chunk text naming an id is parsed and scrubbed", () => {
    const scrubber = scrubberForResponse(base, HEADERS);
    const chunk = (content: string) => `{"id":"chatcmpl-1","model":"m","choices":[{"index":0,"delta":{"content":"${content}"}}]}`;
    expect(base.isCleanJsonText(chunk(`id ${UUID}`))).toBe(true); // what leaked before
    expect(scrubber.isCleanJsonText(chunk(`id ${UUID}`))).toBe(false);
    expect(scrubber.isCleanJsonText(chunk("Hello"))).toBe(true);
    expect(scrubJsonText(scrubber, chunk(`ray ${RAY}`))).toBe(chunk(`ray ${REDACTED}`));
  });

  it("removes a value whole even when a pattern would match part of it", () => {
    const scrubber = scrubberForResponse(base, { "x-request-id": "trace-req_0123456789abcdef-tail" });
    expect(scrubber.scrubText("id trace-req_0123456789abcdef-tail.")).toBe(`id ${REDACTED}.`);
  });
});
