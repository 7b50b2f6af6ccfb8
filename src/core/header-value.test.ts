import { describe, expect, it } from "vitest";
import { safeHeaderValue } from "./header-value.js";

describe("safeHeaderValue", () => {
  it("keeps printable ASCII and percent-encodes everything else, % included", () => {
    expect(safeHeaderValue("tools[0] (web_search): dropped")).toBe("tools[0] (web_search): dropped");
    expect(safeHeaderValue("a\r\nb")).toBe("a%0D%0Ab");
    expect(safeHeaderValue("café 100%")).toBe("caf%C3%A9 100%25");
    expect(safeHeaderValue("\u0000\u007f")).toBe("%00%7F");
    expect(safeHeaderValue("x\ud800y")).toBe("x%EF%BF%BDy");
    expect(decodeURIComponent(safeHeaderValue("名前 😀"))).toBe("名前 😀");
  });

  it("is bounded and never cuts an escape in two", () => {
    expect(safeHeaderValue("x".repeat(5000))).toHaveLength(2000);
    const cut = safeHeaderValue(`${"x".repeat(1998)}é`);
    expect(cut).toBe("x".repeat(1998));
  });
});
