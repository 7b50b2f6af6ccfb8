import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { LEDGER_CHAIN_COLUMNS, LEDGER_GENESIS_HASH, ledgerChainEncoding, ledgerRowHash, ledgerRowHashFromValues } from "./ledger-chain.js";

const row = {
  id: 99n,
  hash: "ignored",
  created_at: 1_764_000_000_000n,
  account_id: "acct_1",
  key_id: null,
  request_id: "req_1",
  kind: "usage",
  model: "gpt-x",
  provider: "openai",
  route: "chat",
  input_tokens: 12n,
  cached_tokens: 0n,
  output_tokens: 7n,
  reasoning_tokens: 0n,
  cost_nano: 31_000n,
  estimated: 0n,
  note: "é\n1",
  deployment: "",
};

describe("ledger chain encoding", () => {
  it("is the documented byte string: tag, previous hash, then name=UTF-8 length:value lines, nulls and integer zeros left out", () => {
    expect(ledgerChainEncoding(LEDGER_GENESIS_HASH, row)).toBe(
      [
        "gateway-ledger-v1",
        "0".repeat(64),
        "created_at=13:1764000000000",
        "account_id=6:acct_1",
        "request_id=5:req_1",
        "kind=5:usage",
        "model=5:gpt-x",
        "provider=6:openai",
        "route=4:chat",
        "input_tokens=2:12",
        "output_tokens=1:7",
        "cost_nano=5:31000",
        "note=4:é\n1",
        "deployment=0:",
        "",
      ].join("\n"),
    );
    expect(ledgerRowHash(LEDGER_GENESIS_HASH, row)).toBe(createHash("sha256").update(ledgerChainEncoding(LEDGER_GENESIS_HASH, row)).digest("hex"));
  });

  it("covers every column of the list and neither id nor hash; a change of one value changes the hash", () => {
    const base = ledgerRowHash(LEDGER_GENESIS_HASH, row);
    expect(ledgerRowHash(LEDGER_GENESIS_HASH, { ...row, id: 1n, hash: "x" })).toBe(base);
    for (const column of LEDGER_CHAIN_COLUMNS) {
      const changed =
        column.type === "integer"
          ? 5n + BigInt(((row as Record<string, unknown>)[column.name] as bigint | undefined) ?? 0n)
          : `${String((row as Record<string, unknown>)[column.name])}x`;
      expect(ledgerRowHash(LEDGER_GENESIS_HASH, { ...row, [column.name]: changed }), column.name).not.toBe(base);
    }
    expect(ledgerRowHash("1".repeat(64), row)).not.toBe(base);
  });

  it("reads positional values (the SQLite function) as the named row", () => {
    const values = LEDGER_CHAIN_COLUMNS.map((c) => (row as Record<string, unknown>)[c.name]);
    expect(ledgerRowHashFromValues("ab".repeat(32), values)).toBe(ledgerRowHash("ab".repeat(32), row));
    expect(ledgerRowHashFromValues(null, values)).toBe(ledgerRowHash(LEDGER_GENESIS_HASH, row));
  });
});
