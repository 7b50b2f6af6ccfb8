import { describe, expect, it } from "vitest";
import { findUnstorableText, unstorableReason } from "./stored-text.js";

describe("stored text", () => {
  it("takes ordinary text, emoji (a surrogate pair) and right-to-left marks", () => {
    for (const text of ["", "Ada Lovelace", "café 😀", "\u202etxt.exe", "名前"]) expect(unstorableReason(text)).toBeNull();
  });

  it("refuses control characters and unpaired surrogates", () => {
    for (const text of ["\u0000", "a\nb", "tab\t", "\u007f", "\ud800", "x\udc00", "\ud83d\ud83d"]) expect(unstorableReason(text)).not.toBeNull();
  });

  it("names the first field that holds one, keys included", () => {
    expect(findUnstorableText({ a: "ok", b: [{ c: "ok" }, { d: "bad\u0000" }] }, "")).toMatchObject({ field: "b[1].d" });
    expect(findUnstorableText({ ["k\u0000"]: 1 }, "")).toMatchObject({ field: "k\u0000" });
    expect(findUnstorableText({ a: 1, b: null, c: true }, "")).toBeNull();
  });
});
