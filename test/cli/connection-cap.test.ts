// The connection defences hold for the whole gateway: a connection that sends nothing is closed after
// headers_timeout_ms (Node's own headers timeout starts only with a request's first byte), and
// server.max_connections counts every worker of `gateway serve --workers N`, not each one (issue 39, item 4).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, json, sleep, startMockUpstream } from "../support/mock-upstream.js";
import { RawClient } from "../support/raw-client.js";
import { killAll, READY_DEADLINE_MS, startGateway, waitFor, waitUntilHealthy } from "./gateway-process.js";

afterAll(() => killAll());

const withServer = (config: string, settings: string) => config.replace("server:\n", `server:\n${settings}`);

/** A raw connection, and whether the gateway has ended it (a RawClient stays half-open after the gateway's FIN). */
async function openWatched(url: string): Promise<{ client: RawClient; ended: () => boolean }> {
  const client = await RawClient.open(url);
  let ended = false;
  void client.ended.then(() => (ended = true));
  return { client, ended: () => ended };
}

/** `gateway serve --workers 2` with these server settings; calls `use` with its URL once both workers listen. */
async function withTwoWorkers(settings: string, use: (url: string) => Promise<void>): Promise<void> {
  const mock = await startMockUpstream();
  mock.handler = (_req, res) => json(res, 200, chatCompletion("fine"));
  const database = await createTestDatabase("sqlite");
  const dir = mkdtempSync(join(tmpdir(), "gw-conncap-"));
  writeFileSync(join(dir, "gateway.config.yaml"), withServer(mockConfig({ openaiUrl: mock.url }), settings));
  try {
    const gateway = await startGateway(dir, { ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml") }, { workers: 2 });
    await waitUntilHealthy(gateway);
    await waitFor(
      () => (gateway.stderr().match(/^worker \d+ \(pid \d+\) listening$/gm) ?? []).length === 2,
      READY_DEADLINE_MS,
      () => `the workers did not both listen:\n${gateway.stderr()}`,
    );
    await use(gateway.baseUrl);
  } finally {
    killAll();
    await mock.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("gateway serve --workers 2", () => {
  it("closes connections that send nothing after headers_timeout_ms, beyond the cap too", { timeout: 120_000 }, async () => {
    await withTwoWorkers("  max_connections: 10\n  headers_timeout_ms: 1000\n  request_timeout_ms: 5000\n", async (url) => {
      const silent: Array<Awaited<ReturnType<typeof openWatched>>> = [];
      for (let i = 0; i < 40; i++) silent.push(await openWatched(url));
      await waitFor(
        () => silent.every((connection) => connection.ended()),
        4_000,
        () => `${silent.filter((connection) => !connection.ended()).length} of 40 silent connections still open`,
      );
      for (const { client } of silent) client.socket.destroy();
    });
  });

  it("counts server.max_connections over both workers together", { timeout: 120_000 }, async () => {
    await withTwoWorkers("  max_connections: 10\n  headers_timeout_ms: 20000\n", async (url) => {
      // Opened one after another, so that the primary hands them to the workers in turn.
      const clients: Array<Awaited<ReturnType<typeof openWatched>>> = [];
      for (let i = 0; i < 30; i++) {
        clients.push(await openWatched(url));
        await sleep(10);
      }
      await sleep(1_500);
      const open = clients.filter((connection) => !connection.ended()).length;
      expect(open).toBeLessThanOrEqual(10);
      expect(open).toBeGreaterThanOrEqual(8);
      for (const { client } of clients) client.socket.destroy();
    });
  });
});
