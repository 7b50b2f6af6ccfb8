// X-Forwarded-Host and X-Forwarded-Proto count only from a peer in server.trusted_proxies: a
// client cannot pass the Origin check by naming its own origin as the forwarded host, nor decide
// the cookie's Secure flag. Here the test client's peer address is 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { DashboardClient, expectError, PASSWORD, signedInAccount } from "./support.js";

const withProxies = (list: string) => mockConfig({ openaiUrl: "http://127.0.0.1:9" }).replace("server:\n", `server:\n  trusted_proxies: ${list}\n`);
const FORGED = { origin: "https://attacker.example", "x-forwarded-host": "attacker.example" };

describe.each([
  ["none configured (the default)", mockConfig({ openaiUrl: "http://127.0.0.1:9" })],
  ["other proxies configured", withProxies('["10.0.0.0/8", "fd00::/8", "::1"]')],
])("forwarded headers from an untrusted peer: %s", (_name, config) => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway(config);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("a cross-origin write naming its origin in X-Forwarded-Host is 403 csrf_failed and changes nothing", async () => {
    const { client } = await signedInAccount(gateway);
    const refused = await client.request("POST", "/dashboard/api/workspaces", { name: "x" }, { headers: FORGED });
    expectError(refused, 403, "forbidden");
    expect(refused.body.error.code).toBe("csrf_failed");
    const signIn = await new DashboardClient(gateway.url).request("POST", "/dashboard/api/signin", { email: "a@b.c", password: "x" }, { headers: FORGED });
    expect(signIn.body.error.code).toBe("csrf_failed");
    expect((await client.get("/workspaces")).body.data).toHaveLength(0);
  });

  it("X-Forwarded-Proto: https does not make the cookie Secure", async () => {
    const { account } = await signedInAccount(gateway);
    const response = await new DashboardClient(gateway.url).request(
      "POST",
      "/dashboard/api/signin",
      { email: account.email, password: PASSWORD },
      { headers: { "x-forwarded-proto": "https" } },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get("set-cookie")).not.toContain("Secure");
  });
});

describe("forwarded headers from a trusted proxy (127.0.0.1)", () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startGateway(withProxies('["127.0.0.1"]'));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it("the Origin check compares with X-Forwarded-Host: the public origin is accepted, another refused", async () => {
    const { client } = await signedInAccount(gateway);
    const forwarded = { "x-forwarded-host": "gateway.example.com", "x-forwarded-proto": "https" };
    const accepted = await client.request("POST", "/dashboard/api/workspaces", { name: "x" }, { headers: { ...forwarded, origin: "https://gateway.example.com" } });
    expect(accepted.status, accepted.text).toBe(201);
    const refused = await client.request("POST", "/dashboard/api/workspaces", { name: "y" }, { headers: { ...forwarded, origin: "https://attacker.example" } });
    expectError(refused, 403, "forbidden");
    expect(refused.body.error.code).toBe("csrf_failed");
    expect((await client.get("/workspaces")).body.data).toHaveLength(1);
  });

  it("X-Forwarded-Proto decides the cookie's Secure flag", async () => {
    const { account } = await signedInAccount(gateway);
    const https = await new DashboardClient(gateway.url).request(
      "POST",
      "/dashboard/api/signin",
      { email: account.email, password: PASSWORD },
      { headers: { "x-forwarded-proto": "https" } },
    );
    expect(https.headers.get("set-cookie")).toMatch(/; Secure$/);
    const http = await new DashboardClient(gateway.url).request(
      "POST",
      "/dashboard/api/signin",
      { email: account.email, password: PASSWORD },
      { headers: { "x-forwarded-proto": "http" } },
    );
    expect(http.headers.get("set-cookie")).not.toContain("Secure");
  });
});
