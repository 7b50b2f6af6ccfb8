import { describe, expect, it } from "vitest";
import { clientAttribution } from "./client-attribution.js";

describe("clientAttribution", () => {
  it("is undefined without attribution headers", () => {
    expect(clientAttribution({ "user-agent": "claude-cli/2.1.197", "anthropic-beta": "x" })).toBeUndefined();
  });

  it("keeps values of the right shape and leaves out the others", () => {
    expect(
      clientAttribution({
        "x-claude-code-session-id": "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0",
        "x-claude-code-agent-id": "a".repeat(128),
        "x-claude-code-parent-agent-id": "a".repeat(129),
        "x-claude-code-request-class": "compaction",
        "x-claude-code-agent-type": "Explore",
        "x-claude-code-compaction": "later",
        "x-app": ["cli", "cli"],
        "x-client-app": "name with space",
      }),
    ).toEqual({ session_id: "0f1e2d3c-4b5a-4978-8796-a5b4c3d2e1f0", agent_id: "a".repeat(128), request_class: "compaction", agent_type: "Explore" });
  });

  it("refuses control characters, quotes and non-ASCII", () => {
    for (const value of ["abc\n", 'a"b', "caf\u00e9", "a\u0000b", "", " "]) expect(clientAttribution({ "x-claude-code-session-id": value }), JSON.stringify(value)).toBeUndefined();
  });
});
