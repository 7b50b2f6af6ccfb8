// `gateway serve --workers 2` with its workers stopped (SIGSTOP, as starved workers): the primary
// keeps accepting connections and queues them for the workers; clients write a complete chat
// request and leave. When the workers run again, none of those requests is forwarded or charged,
// each is logged as a 499. (The same in one process, by route: test/gateway/gone-clients.test.ts.)
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatCompletion, json, sleep, startMockUpstream } from "../support/mock-upstream.js";
import { killAll, PROCESS_TEST_TIMEOUT_MS, READY_DEADLINE_MS, startGateway, waitFor, waitUntilHealthy } from "./gateway-process.js";

afterAll(() => killAll());

const CLIENTS = 12;

/** Connects, writes one complete request, then half-closes (FIN) or closes the socket at once. */
async function sendAndLeave(baseUrl: string, apiKey: string, halfClose: boolean): Promise<void> {
  const { hostname, port, host } = new URL(baseUrl);
  const body = JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "Hi" }] });
  const socket = connect({ host: hostname, port: Number(port) });
  socket.on("error", () => undefined);
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write(
    `POST /v1/chat/completions HTTP/1.1\r\nhost: ${host}\r\nauthorization: Bearer ${apiKey}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  if (halfClose) socket.end();
  else socket.destroy();
}

for (const kind of DATABASE_KINDS) {
  describe(`gateway serve --workers 2 on ${kind}, clients gone while their connections waited`, () => {
    it("forwards none of their requests, charges nothing, logs each as a 499", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
      const mock = await startMockUpstream();
      mock.handler = (_req, res) => json(res, 200, chatCompletion("Hello"));
      const database = await createTestDatabase(kind);
      const dir = mkdtempSync(join(tmpdir(), "gw-gone-"));
      writeFileSync(join(dir, "gateway.config.yaml"), mockConfig({ openaiUrl: mock.url }));
      const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      const START = 1_000_000_000n;
      const account = await store.accounts.create({ email: `gone-${kind}@example.com`, tier: "standard", balance: START });
      const { raw } = await store.keys.create({ accountId: account.id });
      const workers: number[] = [];
      try {
        const gateway = await startGateway(dir, { ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml") }, { workers: 2 });
        await waitUntilHealthy(gateway);
        await waitFor(
          () => gateway.stderr().includes("model-gateway listening"),
          READY_DEADLINE_MS,
          () => `no start-up lines:\n${gateway.stderr()}`,
        );
        workers.push(...[...gateway.stderr().matchAll(/^worker \d+ \(pid (\d+)\) listening$/gm)].map((m) => Number(m[1])));
        expect(workers).toHaveLength(2);

        for (const pid of workers) process.kill(pid, "SIGSTOP");
        await Promise.all(Array.from({ length: CLIENTS }, (_, i) => sendAndLeave(gateway.baseUrl, raw, i % 2 === 0)));
        await sleep(300);
        for (const pid of workers.splice(0)) process.kill(pid, "SIGCONT");

        const gone = () =>
          gateway
            .stdout()
            .split("\n")
            .filter((line) => line.includes('"path":"/v1/chat/completions"'));
        await waitFor(
          () => gone().length >= CLIENTS,
          20_000,
          () => `${gone().length} of ${CLIENTS} request lines:\n${gateway.stdout()}`,
        );
        // Time for a forward and a settlement, were there any.
        await sleep(500);
        const lines = gone().map((line) => JSON.parse(line) as Record<string, unknown>);
        expect(lines).toHaveLength(CLIENTS);
        for (const line of lines) expect(line).toMatchObject({ status: 499, error: "client_aborted" });
        expect(mock.requests).toHaveLength(0);
        expect(await store.db.selectFrom("ledger").select("id").where("account_id", "=", account.id).where("kind", "=", "usage").execute()).toEqual([]);
        expect(await store.db.selectFrom("holds").select("id").where("account_id", "=", account.id).execute()).toEqual([]);
        const final = (await store.accounts.get(account.id))!;
        expect(final.balance).toBe(START);
        expect(final.held).toBe(0n);

        gateway.child.kill("SIGTERM");
        expect(await gateway.exited(20_000)).toEqual({ code: 0, signal: null });
      } finally {
        for (const pid of workers) process.kill(pid, "SIGCONT");
        killAll();
        await store.close();
        await mock.close();
        await database.drop();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
