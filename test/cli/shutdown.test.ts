// SIGTERM while a stream is in flight: the gateway stops accepting new connections, lets the
// stream finish (and settle), closes the database and exits 0.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { createTestDatabase } from "../support/databases.js";
import { mockConfig } from "../support/gateway.js";
import { chatStream, startMockUpstream } from "../support/mock-upstream.js";
import { killAll, PROCESS_TEST_TIMEOUT_MS, startGateway, waitUntilHealthy } from "./gateway-process.js";

afterAll(() => killAll());

it("finishes a stream in flight after SIGTERM, refuses new connections, exits 0", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
  const mock = await startMockUpstream();
  mock.handler = (req, res) =>
    chatStream(
      req,
      res,
      Array.from({ length: 15 }, (_, i) => `w${i} `),
      { delayMs: 100 },
    );
  const database = await createTestDatabase("sqlite");
  const dir = mkdtempSync(join(tmpdir(), "gw-shutdown-"));
  writeFileSync(join(dir, "gateway.config.yaml"), mockConfig({ openaiUrl: mock.url }));
  const store = await openStore({ databaseUrl: null, sqlitePath: database.sqlitePath, secret: database.secret });
  const account = await store.accounts.create({ email: "shutdown@example.com", tier: "standard", balance: 1_000_000_000n });
  const { raw } = await store.keys.create({ accountId: account.id });
  await store.close();
  try {
    const gateway = await startGateway(dir, { ...database.env, GATEWAY_CONFIG: join(dir, "gateway.config.yaml") });
    await waitUntilHealthy(gateway);
    const response = await fetch(`${gateway.baseUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${raw}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-mock", messages: [{ role: "user", content: "x" }], stream: true }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    gateway.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    // New connections are refused while the stream drains.
    await expect(fetch(`${gateway.baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
    let text = new TextDecoder().decode(first.value);
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      text += new TextDecoder().decode(next.value);
    }
    expect(text).toContain("w14 ");
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
    const exit = await gateway.exited(20_000);
    expect(exit.code).toBe(0);
    // The stream's log line was written last, into the log's buffer: exiting flushed it.
    const requestId = response.headers.get("x-request-id");
    expect(gateway.stdout()).toContain(`"request_id":"${requestId}"`);
    const after = await openStore({ databaseUrl: null, sqlitePath: database.sqlitePath, secret: database.secret });
    expect(await after.ledger.count(account.id)).toBe(2); // the opening balance's credit and the stream's charge
    // The stored request log has the stream: its entry was appended as the stream ended, during the
    // shutdown, and written by the close that follows the server's (or by the flush timer just before).
    const logged = await after.db.selectFrom("request_log").select(["status", "output_tokens"]).where("request_id", "=", requestId!).execute();
    expect(logged).toEqual([{ status: 200n, output_tokens: 15n }]);
    await after.close();
  } finally {
    killAll();
    await mock.close();
    await database.drop();
  }
});
