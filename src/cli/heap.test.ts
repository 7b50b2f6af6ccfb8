import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SERVER_ENV, SERVER_NODE_FLAGS } from "./heap.js";

describe("server heap settings", () => {
  it("npm start sets the server environment and passes the command-line heap flags to node", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> };
    const environment = Object.entries(SERVER_ENV).map(([name, value]) => `${name}=${value}`);
    expect(pkg.scripts.start).toMatch(new RegExp(`^${environment.join(" ")} node ${SERVER_NODE_FLAGS.join(" ")} `));
  });
});
