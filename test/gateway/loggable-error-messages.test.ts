// What the request log keeps of an error's message (loggableMessage): the gateway's own words, and
// for errors whose message quotes the request's text or an upstream's answer, a fixed sentence.
import { describe, expect, it } from "vitest";
import { GatewayError, loggableMessage } from "../../src/errors/catalogue.js";
import { toGatewayError } from "../../src/http/error-handler.js";
import { upstreamError } from "../../src/pipeline/upstream-errors.js";
import type { Scrubber } from "../../src/pipeline/scrub.js";

const scrubber: Scrubber = { scrubText: (text) => text, scrubJson: (value) => value, isCleanJsonText: () => true };

describe("loggableMessage", () => {
  it("keeps the gateway's own message", () => {
    const error = new GatewayError("not_found", "The model nope does not exist.");
    expect(loggableMessage(error)).toBe("The model nope does not exist.");
  });

  it("keeps neither the body around a JSON syntax error nor an upstream's words", () => {
    // Fastify's parser error: V8's message quotes the text around the fault.
    const parse = toGatewayError(Object.assign(new SyntaxError("Unexpected token 's', \"secret prompt\" is not valid JSON"), { code: "FST_ERR_CTP_INVALID_JSON_BODY" }));
    expect(parse.message).toContain("secret prompt");
    expect(loggableMessage(parse)).toBe("the body is not valid JSON");
    const upstream = upstreamError(400, JSON.stringify({ error: { message: "content 'secret prompt' refused" } }), scrubber);
    expect(upstream.message).toContain("secret prompt");
    expect(loggableMessage(upstream)).toBe("The upstream answered HTTP 400; its message is not kept in the request log.");
  });
});
