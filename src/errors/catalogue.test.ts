import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERROR_CATALOGUE, GatewayError, renderError } from "./catalogue.js";

// docs/api-contract.md's error table is the contract: the catalogue must hold exactly its rows,
// statuses included. The table is read from this repository, never from outside it.
function contractErrorRows(): Array<[string, number]> {
  const contract = readFileSync(new URL("../../docs/api-contract.md", import.meta.url), "utf8");
  const section = contract.split(/^## Error catalogue$/m)[1]?.split(/^## /m)[0] ?? "";
  return [...section.matchAll(/^\| `(\w+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]);
}

describe("error catalogue", () => {
  it("has every error type of docs/api-contract.md with its status, and nothing else", () => {
    const rows = contractErrorRows();
    expect(rows.length).toBeGreaterThan(20);
    expect(Object.keys(ERROR_CATALOGUE).sort()).toEqual(rows.map(([type]) => type).sort());
    for (const [type, status] of rows) expect(ERROR_CATALOGUE[type as keyof typeof ERROR_CATALOGUE].status).toBe(status);
  });

  it("renders the OpenAI shape with param and request id", () => {
    const body = renderError(new GatewayError("invalid_request", "messages is required", { param: "messages" }), "openai", "req_1");
    expect(body).toEqual({
      error: { message: "messages is required", type: "invalid_request", param: "messages", code: "invalid_request" },
      request_id: "req_1",
    });
  });

  it("renders the Anthropic shape", () => {
    const body = renderError(new GatewayError("not_found"), "anthropic", "req_2");
    expect(body).toEqual({ type: "error", error: { type: "not_found", message: "Not found." }, request_id: "req_2" });
  });
});
