import type { Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import type { Database } from "../store/tables.js";
import { PostgresBatcher, type PgAnswer } from "./postgres-batcher.js";

/** A database whose statements answer when the test says: each executeQuery waits for its turn. */
function heldDatabase() {
  const statements: Array<{ ops: unknown[]; answer(rows: unknown[]): void; fail(error: Error): void }> = [];
  const db = {
    executeQuery: (query: { parameters: readonly unknown[] }) =>
      new Promise((resolve, reject) => {
        statements.push({
          ops: JSON.parse(String(query.parameters[0])) as unknown[],
          answer: (answers) => resolve({ rows: [{ answers }] }),
          fail: reject,
        });
      }),
  };
  return { db: db as unknown as Kysely<Database>, statements };
}

const settled = (promise: Promise<PgAnswer>) =>
  promise.then(
    (answer) => ({ answer }),
    (error: unknown) => ({ error: (error as Error).message }),
  );
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("the PostgreSQL batcher", () => {
  it("fails the operations queued behind a batch that found the database out of reach, without sending them", async () => {
    const { db, statements } = heldDatabase();
    const batcher = new PostgresBatcher(db);
    const first = settled(batcher.call({ k: "admit", n: 1 }, "acct_a", null));
    await tick();
    const second = settled(batcher.call({ k: "admit", n: 2 }, "acct_b", null));
    await tick();
    // Two batches in flight (the most at once); the third operation waits in the queue.
    const queued = settled(batcher.call({ k: "settle", n: 3 }, "acct_c", null));
    await tick();
    expect(statements.map((s) => s.ops.length)).toEqual([1, 1]);

    statements[0]!.fail(new Error("Query read timeout"));
    expect(await first).toEqual({ error: "Query read timeout" });
    await tick();
    expect(statements).toHaveLength(2);
    expect(await queued).toEqual({ error: "Query read timeout" });

    // The batch still in flight keeps its own outcome.
    statements[1]!.answer([{ ok: true }]);
    expect(await second).toEqual({ answer: { ok: true } });
  });

  it("sends the queue on after a batch that failed for one of its operations", async () => {
    const { db, statements } = heldDatabase();
    const batcher = new PostgresBatcher(db);
    const first = settled(batcher.call({ k: "admit", n: 1 }, "acct_a", null));
    await tick();
    const second = settled(batcher.call({ k: "admit", n: 2 }, "acct_b", null));
    await tick();
    const queued = settled(batcher.call({ k: "settle", n: 3 }, "acct_c", null));
    await tick();

    statements[0]!.fail(Object.assign(new Error("refused by a trigger"), { code: "P0001" }));
    expect(await first).toEqual({ error: "refused by a trigger" });
    await tick();
    expect(statements.map((s) => s.ops.length)).toEqual([1, 1, 1]);
    statements[2]!.answer([{ ok: 3 }]);
    statements[1]!.answer([{ ok: 2 }]);
    expect(await queued).toEqual({ answer: { ok: 3 } });
    expect(await second).toEqual({ answer: { ok: 2 } });
  });
});
