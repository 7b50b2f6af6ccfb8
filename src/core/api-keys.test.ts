// Gateway API keys: their shape and their stored hash. The hash must stay SHA-256 hex of the raw key:
// keys minted earlier are looked up by it.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { API_KEY_PREFIX, hashApiKey, isWellFormedApiKey, mintApiKey } from "./api-keys.js";

describe("API keys", () => {
  it("hashes a key to the SHA-256 hex digest of its text, as stored for every key minted so far", () => {
    expect(hashApiKey("mgw_example")).toBe("3224ab4412bc98a0d14c97047ce3f75c1a74fb180af73270fb27864447fb9825");
    const { raw, hash } = mintApiKey();
    expect(hash).toBe(createHash("sha256").update(raw).digest("hex"));
    expect(hashApiKey(raw)).toBe(hash);
  });

  it("mints well-formed keys that differ every time and shows only their beginning", () => {
    const a = mintApiKey();
    const b = mintApiKey();
    expect(a.raw.startsWith(API_KEY_PREFIX)).toBe(true);
    expect(isWellFormedApiKey(a.raw)).toBe(true);
    expect(a.raw).not.toBe(b.raw);
    expect(a.display).toBe(`${a.raw.slice(0, 12)}…`);
    expect(isWellFormedApiKey(`${a.raw}x`)).toBe(false);
    expect(isWellFormedApiKey("sk-not-ours")).toBe(false);
  });
});
