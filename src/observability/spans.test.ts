import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { CLIENT_SPAN_KIND, endSpan } from "./spans.js";

describe("spans without @opentelemetry/api's enums", () => {
  it("writes out the API's own values", () => {
    expect(CLIENT_SPAN_KIND).toBe(SpanKind.CLIENT);
    const statuses: unknown[] = [];
    endSpan(
      { setAttributes: () => undefined, setAttribute: () => undefined, setStatus: (status: unknown) => statuses.push(status), end: () => undefined } as never,
      {},
      "upstream_error",
    );
    expect(statuses).toEqual([{ code: SpanStatusCode.ERROR }]);
  });
});
