import { describe, expect, it } from "vitest";
import { ToolCallSequencer, type ToolCallOperation } from "./sequence-tool-call-deltas.js";

function argumentsOf(ops: ToolCallOperation[], key: number): string {
  return ops.map((op) => (op.kind === "arguments" && op.key === key ? op.fragment : "")).join("");
}

describe("ToolCallSequencer", () => {
  it("streams the first call live and keeps the fragment that arrives with the name", () => {
    const seq = new ToolCallSequencer();
    const ops = [
      ...seq.push([{ index: 0, id: "call_1", type: "function", function: { name: "f", arguments: '{"a' } }]),
      ...seq.push([{ index: 0, function: { arguments: '":1}' } }]),
      ...seq.flush(),
    ];
    expect(ops.map((op) => op.kind)).toEqual(["start", "arguments", "arguments", "end"]);
    expect(argumentsOf(ops, 0)).toBe('{"a":1}');
    expect(ops.at(-1)).toEqual({ kind: "end", key: 0, id: "call_1", name: "f", arguments: '{"a":1}' });
  });

  it("buffers arguments that arrive before the name and never drops them", () => {
    const seq = new ToolCallSequencer();
    const ops = [
      ...seq.push([{ index: 0, id: "call_1", function: { arguments: '{"x"' } }]),
      ...seq.push([{ index: 0, function: { name: "late_name", arguments: ":2}" } }]),
      ...seq.flush(),
    ];
    expect(ops[0]).toEqual({ kind: "start", key: 0, id: "call_1", name: "late_name" });
    expect(argumentsOf(ops, 0)).toBe('{"x":2}');
  });

  it("emits interleaved calls one after another with all their fragments", () => {
    const seq = new ToolCallSequencer();
    const ops = [
      ...seq.push([{ index: 0, id: "a", function: { name: "f", arguments: '{"p":' } }]),
      ...seq.push([{ index: 1, id: "b", function: { name: "g", arguments: '{"q":' } }]),
      ...seq.push([
        { index: 0, function: { arguments: "1}" } },
        { index: 1, function: { arguments: "2}" } },
      ]),
      ...seq.flush(),
    ];
    expect(ops.filter((op) => op.kind !== "arguments").map((op) => `${op.kind}:${op.key}`)).toEqual(["start:0", "end:0", "start:1", "end:1"]);
    expect(argumentsOf(ops, 0)).toBe('{"p":1}');
    expect(argumentsOf(ops, 1)).toBe('{"q":2}');
  });

  it("treats a reused index with a new id as a new call (some upstreams send index 0 for every call)", () => {
    const seq = new ToolCallSequencer();
    seq.push([{ index: 0, id: "a", function: { name: "f", arguments: "{}" } }]);
    seq.push([{ index: 0, id: "b", function: { name: "g", arguments: "{}" } }]);
    seq.flush();
    expect(seq.calls()).toEqual([
      { id: "a", name: "f", arguments: "{}" },
      { id: "b", name: "g", arguments: "{}" },
    ]);
  });

  it("does not repeat a name the upstream sends on every fragment", () => {
    const seq = new ToolCallSequencer();
    seq.push([{ index: 0, id: "a", function: { name: "f", arguments: "{" } }]);
    seq.push([{ index: 0, function: { name: "f", arguments: "}" } }]);
    expect(seq.calls()[0]?.name).toBe("f");
  });
});
