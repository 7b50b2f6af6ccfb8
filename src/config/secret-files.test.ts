import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "./load.js";
import { MAX_SECRET_FILE_BYTES } from "./secret-files.js";

function directory(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "gw-secret-files-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const WITH_PROVIDER_KEY = `
providers:
  mock: { type: openai, base_url: "http://127.0.0.1:9/v1", keys: ["\${MOCK_KEY}"] }
models:
  - { id: m1, kind: chat, provider: mock }
`;

describe("secrets by file (NAME_FILE)", () => {
  it("reads DATABASE_URL, GATEWAY_SECRET and GATEWAY_LEDGER_SECRET from files, one trailing newline dropped", () => {
    const dir = directory({ url: "postgres://gw@db:5432/gateway\n", secret: "server-secret-from-a-file\n", ledger: "ledger-secret-of-16-or-more\r\n" });
    const config = loadConfig({ DATABASE_URL_FILE: join(dir, "url"), GATEWAY_SECRET_FILE: "secret", GATEWAY_LEDGER_SECRET_FILE: join(dir, "ledger") }, dir);
    expect(config.databaseUrl).toBe("postgres://gw@db:5432/gateway");
    expect(config.secret).toBe("server-secret-from-a-file");
    expect(config.ledgerSecret).toBe("ledger-secret-of-16-or-more");
  });

  it("answers the config file's ${VAR} from VAR_FILE (a provider key)", () => {
    const dir = directory({ "gateway.config.yaml": WITH_PROVIDER_KEY, "mock.key": "sk-from-file\n" });
    const config = loadConfig({ MOCK_KEY_FILE: join(dir, "mock.key") }, dir);
    expect(config.providers.get("mock")!.sharedKeys).toEqual(["sk-from-file"]);
  });

  it("the variable itself still works, and a value keeps inner and leading whitespace", () => {
    const dir = directory({ secret: "  two\nlines\n\n" });
    expect(loadConfig({ GATEWAY_SECRET: "plain" }, dir).secret).toBe("plain");
    expect(loadConfig({ GATEWAY_SECRET: "", GATEWAY_SECRET_FILE: join(dir, "secret") }, dir).secret).toBe("  two\nlines\n");
    expect(loadConfig({ GATEWAY_SECRET_FILE: join(dir, "secret") }, dir).secret).toBe("  two\nlines\n");
  });

  it("refuses both set, a missing file and a file too big to be a secret, naming the variable", () => {
    const dir = directory({ secret: "s", big: "x".repeat(MAX_SECRET_FILE_BYTES + 1) });
    expect(() => loadConfig({ GATEWAY_SECRET: "a", GATEWAY_SECRET_FILE: join(dir, "secret") }, dir)).toThrow("GATEWAY_SECRET and GATEWAY_SECRET_FILE are both set");
    expect(() => loadConfig({ DATABASE_URL_FILE: join(dir, "absent") }, dir)).toThrow(/^DATABASE_URL_FILE: .*absent cannot be read: ENOENT/);
    expect(() => loadConfig({ GATEWAY_SECRET_FILE: join(dir, "big") }, dir)).toThrow(`more than ${MAX_SECRET_FILE_BYTES}`);
  });

  it("never opens a NAME_FILE whose NAME the gateway does not read", () => {
    const dir = directory({});
    expect(loadConfig({ SSL_CERT_FILE: join(dir, "no-such-file") }, dir).secret).toBeNull();
  });
});
