import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SERVER_NODE_FLAGS } from "./heap.js";

describe("server heap settings", () => {
  it("npm start passes the command-line heap flags to node", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.start).toContain(`node ${SERVER_NODE_FLAGS.join(" ")} `);
  });
});
