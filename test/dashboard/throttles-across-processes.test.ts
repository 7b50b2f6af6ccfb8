// The sign-in and redemption throttles count for the whole gateway: two gateway processes on one
// database (as two workers are) allow 5 failed attempts per (email or account, IP) between them, not
// 5 each, also when the attempts arrive in parallel (issue 39, item 5).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashPassword } from "../../src/accounts/passwords.js";
import { parseUsd } from "../../src/core/money.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { mockConfig, startGateway, type TestGateway } from "../support/gateway.js";
import { startMockUpstream, type MockUpstream } from "../support/mock-upstream.js";
import { DashboardClient, PASSWORD } from "./support.js";

describe.each(DATABASE_KINDS)("throttles across two gateway processes on %s", (kind) => {
  let mock: MockUpstream;
  let database: TestDatabase;
  let gateways: TestGateway[];

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createTestDatabase(kind);
    const config = mockConfig({ openaiUrl: mock.url });
    gateways = [await startGateway(config, { database }), await startGateway(config, { database })];
  });
  afterAll(async () => {
    for (const gateway of gateways ?? []) await gateway.close();
    await database?.drop();
    await mock?.close();
  });

  async function account(email: string) {
    return gateways[0]!.app.ctx.store.accounts.create({
      email,
      tier: "standard",
      balance: parseUsd("1")!,
      passwordHash: await hashPassword(PASSWORD),
    });
  }

  it("five wrong passwords in turn on both processes, then 429 on either; the right one is throttled too", async () => {
    const email = `turns-${kind}@example.com`;
    await account(email);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await new DashboardClient(gateways[i % 2]!.url).signIn(email, "wrong password")).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const right = await new DashboardClient(gateways[1]!.url).signIn(email);
    expect(right.status).toBe(429);
    expect(right.headers.get("retry-after")).toMatch(/^\d+$/);
  });

  it("parallel wrong passwords over both processes: exactly five are tried", async () => {
    const email = `burst-${kind}@example.com`;
    await account(email);
    const answers = await Promise.all(Array.from({ length: 14 }, (_, i) => new DashboardClient(gateways[i % 2]!.url).signIn(email, "wrong password")));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
  });

  it("a success takes its attempt back: signing in over and over is never throttled", async () => {
    const email = `steady-${kind}@example.com`;
    await account(email);
    for (let i = 0; i < 8; i++) expect((await new DashboardClient(gateways[i % 2]!.url).signIn(email)).status).toBe(200);
  });

  it("five wrong redemption codes in turn on both processes, then 429 on either", async () => {
    const email = `codes-${kind}@example.com`;
    await account(email);
    const clients = [new DashboardClient(gateways[0]!.url), new DashboardClient(gateways[1]!.url)];
    for (const client of clients) expect((await client.signIn(email)).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await clients[i % 2]!.post("/redeem", { code: `MGW-WRONG-${i}-AAAA-BBBB` })).status);
    expect(statuses.slice(0, 5).every((s) => s === 400)).toBe(true);
    expect(statuses.slice(5)).toEqual([429, 429]);
  });
});
