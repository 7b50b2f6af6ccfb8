import { describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../core/catalog.js";
import { authenticatedRequest } from "../request.js";
import { authenticateAnthropic } from "./authenticate.js";

function provider(headers: Record<string, string>): ProviderConfig {
  return {
    name: "anthropic",
    type: "anthropic",
    baseUrl: "https://api.anthropic.com",
    sharedKeys: [],
    apis: new Set(),
    headers,
    timeoutMs: 1000,
    connectTimeoutMs: 1000,
    maxConnections: 16,
    connectionWaitMs: 1000,
    http2: false,
  };
}

const send = (configured: Record<string, string>, client: Record<string, string | string[] | undefined>) =>
  authenticatedRequest(authenticateAnthropic, provider(configured), "POST", "/v1/messages", "sk-ant-upstream-key", "{}", client).headers;

describe("authenticateAnthropic", () => {
  it("passes every anthropic-* client header on as it came, and nothing else of the client's", () => {
    const headers = send(
      {},
      {
        "anthropic-version": "2023-06-01",
        "anthropic-beta": "a-2025-01-01, b-2025-02-02",
        "anthropic-new-thing": "x",
        "anthropic-empty": "",
        authorization: "Bearer gw-client-key",
        "x-api-key": "gw-client-key",
        "x-claude-code-session-id": "s1",
      },
    );
    expect(headers).toEqual({
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "a-2025-01-01, b-2025-02-02",
      "anthropic-new-thing": "x",
      "x-api-key": "sk-ant-upstream-key",
    });
  });

  it("joins an array value with commas and defaults the version", () => {
    expect(send({}, { "anthropic-beta": ["a", "b"] })).toMatchObject({ "anthropic-beta": "a,b", "anthropic-version": "2023-06-01" });
  });

  it("lets the client's version and betas win over the provider's, and the provider's other anthropic-* headers win over the client's", () => {
    const configured = { "anthropic-version": "2024-01-01", "anthropic-beta": "operator-beta", "anthropic-workspace-id": "wrkspc_operator" };
    expect(send(configured, {})).toMatchObject(configured);
    expect(send(configured, { "anthropic-version": "2023-06-01", "anthropic-beta": "client-beta", "anthropic-workspace-id": "wrkspc_client" })).toMatchObject({
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "client-beta",
      "anthropic-workspace-id": "wrkspc_operator",
    });
  });
});
