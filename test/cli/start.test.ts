// Start-up as an operator sees it: `gateway serve` in an empty directory with no config file, on
// each database kind. First start prints the administrator banner once; SIGTERM exits 0.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/core/api-keys.js";
import { verifyPassword } from "../../src/accounts/passwords.js";
import { openStore } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { killAll, PROCESS_TEST_TIMEOUT_MS, startGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "./gateway-process.js";

const BANNER = /First start: created an administrator account/g;
const CREDENTIALS = /email (\S+), password (\S+)\)/;
const API_KEY = /API key:\s+(mgw_[A-Za-z0-9_-]{43})\b/;

interface ErrorBody {
  error: { type: string; message: string };
  request_id: string;
}

async function get(gateway: GatewayProcess, path: string): Promise<{ status: number; requestId: string | null; body: unknown }> {
  const response = await fetch(`${gateway.baseUrl}${path}`, { signal: AbortSignal.timeout(5000) });
  return { status: response.status, requestId: response.headers.get("x-request-id"), body: await response.json() };
}

async function stop(gateway: GatewayProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  gateway.child.kill("SIGTERM");
  return gateway.exited(15_000);
}

for (const kind of DATABASE_KINDS) {
  describe(`gateway serve on ${kind}`, () => {
    let database: TestDatabase;
    let cwd: string;
    let env: Record<string, string>;
    let firstStderr = "";

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      cwd = mkdtempSync(join(tmpdir(), "gw-start-"));
      // Nothing but the database URL: the data dir, the secret and the config are all defaults.
      env = database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {};
    });
    afterAll(async () => {
      killAll();
      rmSync(cwd, { recursive: true, force: true });
      await database?.drop();
    });

    it("first start: serves health, request ids and 404s, prints the banner once, exits 0 on SIGTERM", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
      const gateway = await startGateway(cwd, env);
      try {
        await waitUntilHealthy(gateway);
        await waitFor(
          () => API_KEY.test(gateway.stderr()),
          5000,
          () => `no first-start banner on stderr:\n${gateway.stderr()}`,
        );

        const health = await get(gateway, "/healthz");
        expect(health.status).toBe(200);
        const ready = await get(gateway, "/readyz");
        expect(ready.status).toBe(200);
        const missing = await get(gateway, "/no/such/path");
        expect(missing.status).toBe(404);
        const body = missing.body as ErrorBody;
        expect(body.error.type).toBe("not_found");
        expect(typeof body.error.message).toBe("string");
        const ids = [health.requestId, ready.requestId, missing.requestId];
        for (const id of ids) expect(id).toMatch(/\S{8,}/);
        expect(new Set(ids).size).toBe(3);
        expect(body.request_id).toBe(missing.requestId);
        // One JSON line per request on stdout, written in blocks: an idle gateway's lines still come
        // out (the flush timer), without waiting for the block to fill or the process to exit.
        await waitFor(
          () => ids.every((id) => gateway.stdout().includes(`"request_id":"${id}"`)),
          3000,
          () => `request log lines missing on stdout:\n${gateway.stdout()}`,
        );
        const lines = gateway
          .stdout()
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        expect(lines.find((line) => line.request_id === missing.requestId)).toMatchObject({ msg: "request", path: "/no/such/path", status: 404 });

        const exit = await stop(gateway);
        expect(exit).toEqual({ code: 0, signal: null });
      } finally {
        gateway.child.kill("SIGKILL");
      }
      firstStderr = gateway.stderr();
      expect(firstStderr.match(BANNER)?.length).toBe(1);
      expect(firstStderr).toMatch(/No config file/);
      expect(firstStderr).toMatch(/gateway\.config\.example\.yaml/);
      if (kind === "sqlite") expect(existsSync(join(cwd, "data", "gateway.db"))).toBe(true);
    });

    it("the banner's credentials belong to an administrator account in the database", async () => {
      const credentials = CREDENTIALS.exec(firstStderr);
      const apiKey = API_KEY.exec(firstStderr)?.[1];
      expect(credentials).not.toBeNull();
      expect(apiKey).toBeDefined();
      const [, email, password] = credentials!;
      const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: join(cwd, "data", "gateway.db"), secret: "unused-for-this-check" });
      try {
        const account = await store.accounts.getByEmail(email!);
        expect(account).toMatchObject({ isAdmin: true, status: "active" });
        expect(await verifyPassword(password!, (await store.accounts.passwordHash(account!.id))!)).toBe(true);
        const found = await store.keys.findByHash(hashApiKey(apiKey!));
        expect(found?.account.id).toBe(account!.id);
        expect(await store.accounts.count()).toBe(1);
      } finally {
        await store.close();
      }
    });

    it("a second start on the same data does not print the banner again", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
      const gateway = await startGateway(cwd, env);
      try {
        await waitUntilHealthy(gateway);
        await waitFor(
          () => /No config file/.test(gateway.stderr()),
          5000,
          () => `no config hint on stderr:\n${gateway.stderr()}`,
        );
        expect((await get(gateway, "/readyz")).status).toBe(200);
        expect(await stop(gateway)).toEqual({ code: 0, signal: null });
      } finally {
        gateway.child.kill("SIGKILL");
      }
      expect(gateway.stderr()).not.toMatch(BANNER);
      expect(gateway.stderr()).not.toMatch(/mgw_/);
      expect(gateway.stderr()).toMatch(/listening on http:\/\/127\.0\.0\.1:\d+/);
    });

    it("a start that cannot listen exits non-zero promptly with one line, closing the database", async () => {
      const blocker = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
      const address = blocker.address();
      const port = typeof address === "object" && address ? address.port : 0;
      const gateway = await startGateway(cwd, env, { port });
      try {
        const exit = await gateway.exited(8000);
        expect(exit.code).toBe(1);
        expect(
          gateway
            .stderr()
            .split("\n")
            .filter((line) => line.startsWith("gateway:")),
        ).toEqual([expect.stringMatching(/EADDRINUSE/)]);
      } finally {
        gateway.child.kill("SIGKILL");
        await new Promise((resolve) => blocker.close(resolve));
      }
    });

    it("two processes starting together on an empty database: both serve, one banner", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
      const fresh = await createTestDatabase(kind);
      const sharedCwd = mkdtempSync(join(tmpdir(), "gw-start-"));
      const sharedEnv: Record<string, string> = { GATEWAY_SECRET: "shared-secret-for-test" };
      if (fresh.databaseUrl) sharedEnv.DATABASE_URL = fresh.databaseUrl;
      const gateways = await Promise.all([startGateway(sharedCwd, sharedEnv), startGateway(sharedCwd, sharedEnv)]);
      try {
        await Promise.all(gateways.map((gateway) => waitUntilHealthy(gateway)));
        const exits = await Promise.all(gateways.map((gateway) => stop(gateway)));
        expect(exits).toEqual([
          { code: 0, signal: null },
          { code: 0, signal: null },
        ]);
        const banners = gateways.map((gateway) => gateway.stderr().match(BANNER)?.length ?? 0);
        expect(banners.reduce((a, b) => a + b, 0)).toBe(1);
      } finally {
        for (const gateway of gateways) gateway.child.kill("SIGKILL");
        rmSync(sharedCwd, { recursive: true, force: true });
        await fresh.drop();
      }
    });
  });
}
