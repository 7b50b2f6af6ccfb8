import { Sha256 } from "@aws-crypto/sha256-js";
import { SignatureV4 } from "@smithy/signature-v4";
import { describe, expect, it } from "vitest";
import type { ProviderConfig } from "../../core/catalog.js";
import { signedRequest } from "../request.js";
import { signBedrockRequest } from "./authenticate.js";
import { parseAwsKey } from "./credentials.js";

const provider: ProviderConfig = {
  name: "aws",
  type: "bedrock",
  baseUrl: "https://bedrock-runtime.eu-central-1.amazonaws.com",
  sharedKeys: [],
  apis: new Set(),
  headers: { "x-extra": "1" },
  region: "eu-central-1",
  timeoutMs: 1000,
  connectTimeoutMs: 1000,
  maxConnections: 16,
  connectionWaitMs: 1000,
  http2: false,
};

describe("signBedrockRequest", () => {
  it("signs method, path, host, headers and the exact body bytes for service bedrock in the provider's region", async () => {
    const body = '{"messages":[{"role":"user","content":[{"text":"hi é"}]}]}';
    const request = await signedRequest(
      signBedrockRequest,
      provider,
      "POST",
      "/model/anthropic.claude-v2%3A1/converse",
      "AKIDEXAMPLE000000001:secretEXAMPLE/abc+def:TOKENexample==",
      body,
    );
    const authorization = request.headers.authorization!;
    expect(authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE000000001\/\d{8}\/eu-central-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token;x-extra, Signature=[0-9a-f]{64}$/,
    );
    expect(request.headers["x-amz-security-token"]).toBe("TOKENexample==");
    expect(request.headers.host).toBeUndefined();

    // The same signer, from the same credentials and date, agrees; a byte more in the body does not.
    const amzDate = request.headers["x-amz-date"]!;
    const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
    const signer = new SignatureV4({
      service: "bedrock",
      region: "eu-central-1",
      credentials: parseAwsKey("AKIDEXAMPLE000000001:secretEXAMPLE/abc+def:TOKENexample=="),
      sha256: Sha256,
    });
    const headers = { "content-type": "application/json", host: "bedrock-runtime.eu-central-1.amazonaws.com", "x-extra": "1" };
    const redo = (text: string) =>
      signer.sign({ method: "POST", protocol: "https:", hostname: headers.host, path: "/model/anthropic.claude-v2%3A1/converse", query: {}, headers, body: text }, { signingDate });
    expect((await redo(body)).headers.authorization).toBe(authorization);
    expect((await redo(`${body} `)).headers.authorization).not.toBe(authorization);
  });

  it("refuses a key that is not ACCESS_KEY_ID:SECRET_ACCESS_KEY[:SESSION_TOKEN], without naming it", () => {
    for (const key of ["onlyonepartCANARY", "a:b:c:dCANARY", ":secretCANARY", "id:secretCANARY:"]) {
      expect(() => parseAwsKey(key)).toThrow(/^An upstream key of this provider is not of the form/);
      try {
        parseAwsKey(key);
      } catch (error) {
        expect(String(error)).not.toContain("CANARY");
      }
    }
    expect(parseAwsKey(" id:secret ")).toEqual({ accessKeyId: "id", secretAccessKey: "secret" });
  });
});
