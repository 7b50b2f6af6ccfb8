import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./load.js";

function load(yaml: string) {
  const dir = mkdtempSync(join(tmpdir(), "gw-guardrails-"));
  writeFileSync(join(dir, "gateway.config.yaml"), yaml);
  return loadConfig({}, dir);
}

const regex = (pattern: string) => `
guardrails:
  - name: custom-one
    kind: regex
    patterns: [{ name: p, pattern: ${JSON.stringify(pattern)} }]
`;

describe("the guardrails section", () => {
  it("is empty by default, and blocked answers are charged", () => {
    expect(load("").guardrails).toEqual({ list: [], chargeBlockedAnswers: true });
  });

  it("compiles builtin and regex guardrails with their defaults", () => {
    const config = load(`
billing: { charge_blocked_answers: false }
guardrails:
  - { name: secrets, kind: builtin, patterns: [secrets, email] }
  - { name: codes, kind: regex, patterns: [{ name: project, pattern: "PROJECT-[0-9]+" }], applies_to: [response], mode: mask, on_failure: open }
`);
    expect(config.guardrails.chargeBlockedAnswers).toBe(false);
    expect(config.guardrails.list.map((g) => [g.name, g.request, g.response, g.mode, g.onFailure, g.patterns.length])).toEqual([
      ["secrets", true, false, "block", "closed", 9],
      ["codes", false, true, "mask", "open", 1],
    ]);
  });

  it.each(["(a)\\1", "(?<=x)a", "a(?!b)"])("refuses %s, naming the guardrail and the field", (pattern) => {
    expect(() => load(regex(pattern))).toThrow(/guardrails\[0\]\.patterns\[0\]: guardrail "custom-one": pattern "p" is not one RE2 runs in linear time/);
  });

  it("refuses unknown built-in ids, missing webhooks, duplicate names, and unbounded lists", () => {
    expect(() => load("guardrails: [{ name: g, kind: builtin, patterns: [ssn] }]")).toThrow(/guardrail "g": unknown built-in pattern "ssn"/);
    expect(() => load("guardrails: [{ name: g, kind: webhook }]")).toThrow(/guardrail "g": a webhook guardrail needs webhook.url/);
    expect(() => load("guardrails: [{ name: g, kind: builtin, patterns: [email] }, { name: g, kind: builtin, patterns: [email] }]")).toThrow(/the name is used twice/);
    expect(() => load(regex("x".repeat(501)))).toThrow(/guardrails\[0\]\.patterns\[0\]/);
    const many = Array.from({ length: 33 }, (_, i) => `{ name: p${i}, pattern: "a${i}" }`).join(", ");
    expect(() => load(`guardrails: [{ name: g, kind: regex, patterns: [${many}] }]`)).toThrow(/guardrails\[0\]\.patterns/);
    expect(() => load("guardrails: [{ name: g, kind: webhook, webhook: { url: 'http://127.0.0.1:9/x', timeout_ms: 60000 } }]")).toThrow(/timeout_ms/);
  });
});
