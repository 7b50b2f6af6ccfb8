// The base64 pass-through scrubber gives exactly what scrubbing the parsed document would, while
// sending clean payloads as the upstream's own bytes.
import { describe, expect, it } from "vitest";
import { scrubJsonWithPayloads } from "../../src/media/images/base64-payloads.js";
import { createScrubber } from "../../src/pipeline/scrub.js";
import { fakeImage } from "./support.js";

const SECRET = "AlnumOnlySecretKey0123456789XYZ";
const scrubber = createScrubber({ secrets: ["sk-test-shared-key-000000000000", SECRET], hosts: ["http://127.0.0.1:4555/v1", "localhost"] });

function viaPayloads(doc: unknown): string {
  const out = scrubJsonWithPayloads(Buffer.from(JSON.stringify(doc)), scrubber);
  const text = Buffer.concat(out.parts).toString("utf8");
  expect(out.length).toBe(Buffer.byteLength(text));
  return text;
}

const reference = (doc: unknown) => JSON.stringify(scrubber.scrubJson(JSON.parse(JSON.stringify(doc))));

describe("scrubJsonWithPayloads", () => {
  const image = fakeImage(300_000, 11);
  const cases: Record<string, unknown> = {
    "clean images": { created: 1, data: [{ b64_json: image }, { b64_json: fakeImage(5000, 12) }] },
    "a secret inside a payload": { data: [{ b64_json: image.slice(0, 1000) + SECRET + image.slice(1000) }] },
    "a secret at a window edge": { data: [{ b64_json: image.slice(0, 256 * 1024 - 10) + SECRET + image.slice(256 * 1024) }] },
    "a host at the start of a payload": { data: [{ b64_json: `localhost${image}` }] },
    "canaries in the text around payloads": {
      data: [{ b64_json: image, revised_prompt: 'quote \\" and "sk-test-shared-key-000000000000" at http://127.0.0.1:4555/v1/x' }],
      organization: "org-abcdefghijklmnopqrst",
      request_id: image,
    },
    "payloads under client-named keys and in arrays": { metadata: { project: image }, list: [image, "short", { deep: [[image]] }] },
    "escaped slashes make a string ordinary text": { data: [{ b64_json: image.replace(/\//g, "\\/") }] },
    "unicode and escapes next to payloads": { a: "é ☃ \n \t \\", b: image, c: "\u0000" },
    "no payloads at all": { a: 1, b: [true, null, "x"], c: "sk-test-shared-key-000000000000" },
  };
  for (const [name, doc] of Object.entries(cases)) {
    it(name, () => {
      expect(viaPayloads(doc)).toBe(reference(doc));
    });
  }

  it("keeps the exact upstream bytes of a clean payload (no copy)", () => {
    const body = Buffer.from(JSON.stringify({ data: [{ b64_json: image }] }));
    const out = scrubJsonWithPayloads(body, scrubber);
    const payload = out.parts.find((part) => part.length === image.length)!;
    expect(payload.buffer).toBe(body.buffer);
  });

  it("rejects a body that is not JSON", () => {
    expect(() => scrubJsonWithPayloads(Buffer.from(`{"data":[{"b64_json":"${image}"`), scrubber)).toThrow(SyntaxError);
  });

  it("handles a large answer quickly", () => {
    const doc = { data: Array.from({ length: 8 }, (_, i) => ({ b64_json: fakeImage(4_000_000, i + 20) })) };
    const body = Buffer.from(JSON.stringify(doc));
    const started = performance.now();
    const out = scrubJsonWithPayloads(body, scrubber);
    const elapsed = performance.now() - started;
    expect(out.length).toBe(body.length);
    // About 32 MB: generous bound for slow CI machines; typically a fraction of it.
    expect(elapsed).toBeLessThan(5_000);
  });
});
