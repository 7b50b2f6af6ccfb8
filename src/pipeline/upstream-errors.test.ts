// Upstream error bodies -> catalogue errors, including Google's google.rpc.Status bodies.
import { describe, expect, it } from "vitest";
import { upstreamError } from "./upstream-errors.js";
import type { Scrubber } from "./scrub.js";

const scrubber: Scrubber = { scrubText: (text) => text, scrubJson: (value) => value, isCleanJsonText: () => true };
const google = (code: number, status: string, message: string, reason?: string) =>
  JSON.stringify({ error: { code, message, status, ...(reason && { details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason, domain: "googleapis.com" }] }) } });

describe("upstreamError", () => {
  it("a Gemini 400 INVALID_ARGUMENT is the client's invalid_request, with the upstream's message", () => {
    const error = upstreamError(400, google(400, "INVALID_ARGUMENT", "Invalid value at 'contents[0].role'"), scrubber);
    expect([error.type, error.status, error.message]).toEqual(["invalid_request", 400, "Upstream error: Invalid value at 'contents[0].role'"]);
  });

  it("a Gemini invalid API key (400 with reason API_KEY_INVALID) is the operator's problem, not the client's", () => {
    const error = upstreamError(400, google(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.", "API_KEY_INVALID"), scrubber);
    expect(error.type).toBe("provider_error");
    expect(error.message).toContain("contact the gateway operator");
    expect(error.message).not.toContain("API key not valid");
  });

  it("PERMISSION_DENIED and FAILED_PRECONDITION are provider errors", () => {
    expect(upstreamError(403, google(403, "PERMISSION_DENIED", "denied"), scrubber).message).toContain("contact the gateway operator");
    const region = upstreamError(400, google(400, "FAILED_PRECONDITION", "User location is not supported for the API use."), scrubber);
    expect([region.type, region.message]).toEqual(["provider_error", "Upstream error: User location is not supported for the API use."]);
  });

  it.each([
    [404, "NOT_FOUND", "not_found"],
    [500, "INTERNAL", "provider_error"],
    [503, "UNAVAILABLE", "provider_error"],
  ])("Gemini %d %s -> %s", (code, status, type) => {
    expect(upstreamError(code, google(code, status, "m"), scrubber).type).toBe(type);
  });

  it("OpenAI and Anthropic shapes keep their mapping", () => {
    expect(upstreamError(400, JSON.stringify({ error: { message: "bad", type: "invalid_request_error" } }), scrubber).message).toBe("Upstream error: bad");
    expect(upstreamError(400, JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "bad2" } }), scrubber).message).toBe("Upstream error: bad2");
    expect(upstreamError(502, "not json", scrubber).message).toBe("Upstream error: status 502");
  });
});
