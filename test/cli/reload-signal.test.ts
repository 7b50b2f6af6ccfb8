// SIGHUP against a real `gateway serve` child process, on each database: a changed file is swapped
// in (/readyz's version, the public catalog, the audit log), an invalid one is refused with the
// start-up message on stderr and in the JSON log while the old config keeps serving.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStore } from "../../src/store/index.js";
import { createTestDatabase, DATABASE_KINDS, type TestDatabase } from "../support/databases.js";
import { killAll, PROCESS_TEST_TIMEOUT_MS, startGateway, waitFor, waitUntilHealthy, type GatewayProcess } from "./gateway-process.js";

function configText(options: { price: string; extraModel?: boolean }): string {
  return `
providers:
  upstream:
    type: openai
    base_url: http://127.0.0.1:9/v1
    keys: ["sk-never-called-0001"]
models:
  - id: model-a
    kind: chat
    provider: upstream
    pricing: { input_per_mtok: "${options.price}", output_per_mtok: "2.00" }
${options.extraModel ? '  - id: model-b\n    kind: chat\n    provider: upstream\n    pricing: { input_per_mtok: "7.00", output_per_mtok: "8.00" }' : ""}
`;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

async function getJson<T>(gateway: GatewayProcess, path: string): Promise<T> {
  const response = await fetch(`${gateway.baseUrl}${path}`, { signal: AbortSignal.timeout(5000) });
  expect(response.status, path).toBe(200);
  return (await response.json()) as T;
}

const readyz = (gateway: GatewayProcess) => getJson<{ status: string; config: { version: string; loaded_at: string } }>(gateway, "/readyz");
const catalog = async (gateway: GatewayProcess) =>
  new Map((await getJson<{ data: Array<{ id: string; pricing: { input_per_mtok: string } }> }>(gateway, "/v1/catalog")).data.map((m) => [m.id, m.pricing.input_per_mtok]));

for (const kind of DATABASE_KINDS) {
  describe(`SIGHUP reload of gateway serve on ${kind}`, () => {
    let database: TestDatabase;
    let cwd: string;

    beforeAll(async () => {
      database = await createTestDatabase(kind);
      cwd = mkdtempSync(join(tmpdir(), "gw-sighup-"));
    });
    afterAll(async () => {
      killAll();
      rmSync(cwd, { recursive: true, force: true });
      await database?.drop();
    });

    it("swaps a changed file in, refuses an invalid one with the start-up message, keeps serving", { timeout: PROCESS_TEST_TIMEOUT_MS }, async () => {
      const path = join(cwd, "gateway.config.yaml");
      const first = configText({ price: "1.00" });
      writeFileSync(path, first);
      const gateway = await startGateway(cwd, { ...database.env, GATEWAY_CONFIG: path });
      await waitUntilHealthy(gateway);
      const started = await readyz(gateway);
      expect(started).toMatchObject({ status: "ready", config: { version: sha256(first) } });
      expect(await catalog(gateway)).toEqual(new Map([["model-a", "1.00"]]));

      const second = configText({ price: "3.00", extraModel: true });
      writeFileSync(path, second);
      gateway.child.kill("SIGHUP");
      await waitFor(
        () => gateway.stderr().includes("SIGHUP: config reloaded"),
        10_000,
        () => `no reload on stderr:\n${gateway.stderr()}`,
      );
      expect(gateway.stderr()).toContain(`SIGHUP: config reloaded: ${sha256(first).slice(0, 12)} -> ${sha256(second).slice(0, 12)} (models +1 -0 ~1, providers +0 -0 ~0)`);
      const reloaded = await readyz(gateway);
      expect(reloaded.config.version).toBe(sha256(second));
      expect(Date.parse(reloaded.config.loaded_at)).toBeGreaterThanOrEqual(Date.parse(started.config.loaded_at));
      expect(await catalog(gateway)).toEqual(
        new Map([
          ["model-a", "3.00"],
          ["model-b", "7.00"],
        ]),
      );

      writeFileSync(path, configText({ price: "-5" }));
      gateway.child.kill("SIGHUP");
      const message = `${path}: models[0].pricing.input_per_mtok: "-5" is not a non-negative USD amount with at most 9 decimals`;
      await waitFor(
        () => gateway.stderr().includes("SIGHUP: config reload refused"),
        10_000,
        () => `no refusal on stderr:\n${gateway.stderr()}`,
      );
      expect(gateway.stderr()).toContain(`SIGHUP: config reload refused, the running config (${sha256(second).slice(0, 12)}) stays: ${message}\n`);
      // The same message in the JSON log (stdout, written in blocks: wait for it).
      await waitFor(
        () => gateway.stdout().includes("config reload refused"),
        5_000,
        () => `no refusal in the log:\n${gateway.stdout()}`,
      );
      const logged = gateway
        .stdout()
        .split("\n")
        .filter((line) => line.includes("config reload refused"))
        .map((line) => JSON.parse(line) as { level: number; reason: string; config_version: string });
      expect(logged).toEqual([expect.objectContaining({ level: 50, reason: message, config_version: sha256(second) })]);
      expect(await readyz(gateway)).toEqual(reloaded);
      expect((await catalog(gateway)).get("model-b")).toBe("7.00");

      gateway.child.kill("SIGTERM");
      expect(await gateway.exited(15_000)).toEqual({ code: 0, signal: null });

      // The reload is in the audit log, its actor the signal.
      const store = await openStore({ databaseUrl: database.databaseUrl, sqlitePath: database.sqlitePath, secret: database.secret });
      try {
        const rows = await store.db.selectFrom("audit_log").selectAll().where("action", "=", "config.reload").execute();
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({ actor_type: "cli", actor_name: "SIGHUP", target_type: "config", target_id: path });
      } finally {
        await store.close();
      }
    });
  });
}
