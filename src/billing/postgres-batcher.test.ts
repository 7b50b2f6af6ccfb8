// When the PostgreSQL batcher hands answers out relative to the WAL flush (ADR 0028), against a stub
// database that answers each statement when the test says so. The billing suites (test/billing/,
// test/gateway/concurrency.test.ts) run the same code against a real PostgreSQL.
import type { CompiledQuery, Kysely } from "kysely";
import { describe, expect, it } from "vitest";
import type { Database } from "../store/tables.js";
import { PostgresBatcher, type PgAnswer } from "./postgres-batcher.js";

interface Sent {
  sql: string;
  ops: { k: string; a: unknown[] }[];
  answer(answers?: PgAnswer[]): void;
  fail(error: unknown): void;
}

/** A Kysely stand-in whose statements wait until the test answers them. */
function stubDatabase() {
  const sent: Sent[] = [];
  const db = {
    executeQuery(query: CompiledQuery): Promise<{ rows: unknown[] }> {
      return new Promise((resolve, reject) => {
        const parameter = query.parameters[0];
        const ops = typeof parameter === "string" ? (JSON.parse(parameter) as Sent["ops"]) : [];
        sent.push({
          sql: query.sql,
          ops,
          answer: (answers) => resolve({ rows: [{ answers: answers ?? ops.map(() => ({ outcome: "ok", recorded: true })) }] }),
          fail: reject,
        });
      });
    },
  };
  return { db: db as unknown as Kysely<Database>, sent };
}

const isFlush = (s: Sent) => s.sql.includes("pg_logical_emit_message");
const isBatch = (s: Sent) => s.sql.includes("gw_batch");

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 3000;
  while (!condition() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 1));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

async function turns(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Settles on the next turns: true when the promise has resolved by then. */
async function resolvedSoon(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  promise.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
  return done;
}

describe("PostgreSQL batcher and the WAL flush", () => {
  it("commits each batch without waiting for the flush, then answers an admission only after a flush sent later", async () => {
    const { db, sent } = stubDatabase();
    const batcher = new PostgresBatcher(db);
    const admitted = batcher.call("admit", ["a"], "acct", "key");
    await until(() => sent.length === 1, "the batch");
    expect(sent[0]!.sql).toContain("set_config('synchronous_commit', 'off', true)");
    expect(sent[0]!.ops).toEqual([{ k: "admit", a: ["a"] }]);
    sent[0]!.answer();
    await until(() => sent.length === 2, "the flush");
    expect(isFlush(sent[1]!)).toBe(true);
    expect(await resolvedSoon(admitted)).toBe(false);
    sent[1]!.answer();
    await expect(admitted).resolves.toEqual({ outcome: "ok", recorded: true });
  });

  it("answers a settlement at its commit and confirms it with a later flush", async () => {
    const { db, sent } = stubDatabase();
    const batcher = new PostgresBatcher(db);
    const settled = batcher.call("settle", ["s"], "acct", "key");
    await until(() => sent.length === 1, "the batch");
    sent[0]!.answer();
    await expect(settled).resolves.toEqual({ outcome: "ok", recorded: true });
    // No flush of its own at once: it joins the next one, at the latest after 100 ms.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sent.filter(isFlush)).toHaveLength(0);
    await until(() => sent.some(isFlush), "the confirming flush");
    sent.find(isFlush)!.answer();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(sent.filter(isBatch)).toHaveLength(1);
  });

  it("does not count a flush already in flight for a batch that committed after it was sent", async () => {
    const { db, sent } = stubDatabase();
    const batcher = new PostgresBatcher(db);
    const first = batcher.call("admit", ["1"], "acct", "key");
    await until(() => sent.length === 1, "the first batch");
    sent[0]!.answer();
    await until(() => sent.length === 2, "the first flush");
    const second = batcher.call("admit", ["2"], "acct", "key");
    await until(() => sent.length === 3, "the second batch");
    sent[2]!.answer();
    await turns(20);
    expect(sent).toHaveLength(3);
    sent[1]!.answer();
    await first;
    expect(await resolvedSoon(second)).toBe(false);
    await until(() => sent.length === 4 && isFlush(sent[3]!), "the second flush");
    sent[3]!.answer();
    await second;
  });

  it("fails the admission and applies the settlement again when the flush fails", async () => {
    const { db, sent } = stubDatabase();
    const retries: number[] = [];
    const batcher = new PostgresBatcher(db, { onSettlementRetry: (_error, attempt) => retries.push(attempt) });
    const admitted = batcher.call("admit", ["a"], "acct", "key");
    const settled = batcher.call("settle", ["s"], "acct", "key");
    await until(() => sent.length === 1, "the batch");
    expect(sent[0]!.ops.map((op) => op.k)).toEqual(["admit", "settle"]);
    sent[0]!.answer();
    await expect(settled).resolves.toEqual({ outcome: "ok", recorded: true });
    await until(() => sent.length === 2, "the flush");
    const lost = Object.assign(new Error("server closed the connection"), { code: "57P01" });
    sent[1]!.fail(lost);
    await expect(admitted).rejects.toBe(lost);
    expect(retries).toEqual([1]);
    // The settlement again, 250 ms later, with the same arguments; its answer waits for its own flush.
    await until(() => sent.length === 3, "the settlement's second attempt");
    expect(sent[2]!.ops).toEqual([{ k: "settle", a: ["s"] }]);
    sent[2]!.answer([{ recorded: false, cost: "5" }]);
    await until(() => sent.length === 4 && isFlush(sent[3]!), "the second attempt's flush");
    sent[3]!.answer();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(sent).toHaveLength(4);
    expect(retries).toEqual([1]);
  }, 10_000);
});
