import { describe, expect, it } from "vitest";
import type { Guardrail } from "../../core/guardrails/guardrail.js";
import { compileBuiltins } from "../../core/guardrails/matcher.js";
import type { ClientFrame, StreamTranslator } from "../../upstreams/plan.js";
import type { GuardrailDecision } from "./check-texts.js";
import { GuardedStream } from "./stream-guard.js";

function guardrail(mode: Guardrail["mode"]): Guardrail {
  return {
    name: "secrets",
    kind: "builtin",
    request: false,
    response: true,
    mode,
    applies: "all",
    description: "",
    onFailure: "closed",
    patterns: compileBuiltins(["secrets", "email"]),
    webhook: null,
  };
}

/** A translator that turns each event's data (a text piece) into one Chat delta frame. */
function chatPieces(): StreamTranslator {
  return {
    push: (event) => [{ data: { choices: [{ index: 0, delta: { content: event.data } }] } }],
    end: () => [{ data: "[DONE]", raw: true }],
    fail: () => [],
    reportedUsage: () => null,
    deliveredText: () => "",
  };
}

function run(pieces: string[], mode: Guardrail["mode"], window = 64) {
  const decisions: GuardrailDecision[] = [];
  const guard = new GuardedStream(chatPieces(), [guardrail(mode)], window, (d) => decisions.push(d));
  const frames: ClientFrame[] = [];
  const releasedAfter: number[] = [];
  for (const piece of pieces) {
    frames.push(...guard.push({ event: "", data: piece }));
    releasedAfter.push(frames.length);
  }
  if (!guard.blocked()) frames.push(...guard.end());
  const text = frames
    .filter((f) => !f.raw)
    .map((f) => (f.data as { choices: Array<{ delta: { content: string } }> }).choices[0]!.delta.content)
    .join("");
  return { text, decisions, blocked: guard.blocked(), releasedAfter };
}

describe("GuardedStream", () => {
  const key = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345";

  it("masks a key split across events, whole", () => {
    const { text, decisions } = run(["Here: sk-ant-", key.slice(7, 20), key.slice(20), " done. ", "x".repeat(100)], "mask");
    expect(text).toBe(`Here: [REDACTED:anthropic_key] done. ${"x".repeat(100)}`);
    expect(decisions).toContainEqual({ guardrail: "secrets", side: "response", action: "mask" });
  });

  it("blocks before any part of a split match leaves", () => {
    const { text, blocked } = run(["Hi. ", "sk-ant-", key.slice(7), " more"], "block");
    expect(blocked).toEqual({ guardrail: "secrets", unavailable: false });
    expect(text).not.toContain("sk-ant");
  });

  it("holds back at most the window: earlier text leaves once the window is full", () => {
    const { releasedAfter, text } = run(["a".repeat(10), "b".repeat(70), "c".repeat(70)], "mask");
    expect(releasedAfter[0]).toBe(0);
    expect(releasedAfter[1]).toBeGreaterThan(0);
    expect(text).toBe("a".repeat(10) + "b".repeat(70) + "c".repeat(70));
  });

  it("logs without changing the text", () => {
    const { text, decisions } = run(["mail jane", ".doe@example.com", " thanks"], "log");
    expect(text).toBe("mail jane.doe@example.com thanks");
    expect(decisions.map((d) => d.action)).toContain("log");
  });

  it("masks several matches across many one-character events", () => {
    const source = `a ${key} b jane@example.com c`;
    const { text } = run([...source], "mask", 64);
    expect(text).toBe("a [REDACTED:anthropic_key] b [REDACTED:email] c");
  });
});
