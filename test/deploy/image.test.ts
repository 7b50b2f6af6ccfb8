// The gateway's image (Containerfile), run as an operator would: on SQLite in a volume with a
// read-only root filesystem, answering the first start's curl (the README's quick start) on both
// demo models; its health check; SIGTERM (podman stop) drains and exits 0; the data outlives the
// container; and on PostgreSQL with the database URL given as a secret file.
import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { demoChat, firstStartKey, freePort, GATEWAY_IMAGE, logsOf, logUntil, ok, podman, waitForStatus } from "./podman.js";

const PREFIX = `mgw-image-test-${process.pid}`;
const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

afterAll(async () => {
  const { stdout } = await podman(["ps", "-a", "--filter", `name=${PREFIX}`, "--format", "{{.Names}}"]);
  for (const name of stdout.split("\n").filter(Boolean)) await podman(["rm", "-f", "-v", "-t", "0", name]);
  await podman(["volume", "rm", "-f", `${PREFIX}-data`]);
});

describe("the image", () => {
  it("is under 450 MB, non-root, has a health check, stops with SIGTERM, and has no dev dependencies", async () => {
    const inspect = JSON.parse(await ok(podman(["image", "inspect", GATEWAY_IMAGE]), "image inspect")) as Array<{
      Size: number;
      Config: { User?: string; StopSignal?: string; ExposedPorts?: Record<string, unknown>; Volumes?: Record<string, unknown>; WorkingDir?: string };
      Healthcheck?: { Test?: string[] };
    }>;
    const image = inspect[0]!;
    process.stderr.write(`image ${GATEWAY_IMAGE}: ${Math.round(image.Size / 1e6)} MB\n`);
    // About 360 MB on the local base (240 MB of it the base): a dev dependency or a build tool left in would show.
    expect(image.Size).toBeLessThan(450e6);
    expect(image.Config.User).toBe("gateway");
    expect(image.Config.StopSignal).toBe("SIGTERM");
    expect(Object.keys(image.Config.ExposedPorts ?? {})).toEqual(["8080/tcp"]);
    expect(Object.keys(image.Config.Volumes ?? {})).toEqual(["/data"]);
    expect(image.Config.WorkingDir).toBe("/app");
    expect(image.Healthcheck?.Test?.join(" ")).toContain("/readyz");
    const listing = await ok(
      podman([
        "run",
        "--rm",
        "--entrypoint",
        "sh",
        GATEWAY_IMAGE,
        "-c",
        "id -u; ls dist/web/index.html node_modules/better-sqlite3/build/Release/better_sqlite3.node; ls -d node_modules/typescript node_modules/vitest node_modules/vite 2>&1 || true",
      ]),
      "listing",
    );
    expect(listing.split("\n")[0]).toBe("10001");
    expect(listing).toContain("dist/web/index.html");
    expect(listing).toMatch(/node_modules\/typescript.*No such file/);
    expect(listing).toMatch(/node_modules\/vitest.*No such file/);
  });

  it("on SQLite in a volume, read-only root: the first start's curl answers, both demo models bill, SIGTERM drains, the data stays", async () => {
    const port = await freePort();
    const name = `${PREFIX}-sqlite`;
    const run = (container: string) =>
      ok(podman(["run", "-d", "--name", container, "--read-only", "--tmpfs", "/tmp", "-v", `${PREFIX}-data:/data`, "-p", `127.0.0.1:${port}:8080`, GATEWAY_IMAGE]), "podman run");
    await run(name);
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForStatus(`${baseUrl}/readyz`, 200, 60_000, () => logsOf(name));
    // The supervisor prints the first start's banner once every worker listens.
    const banner = await logUntil(name, "try:");
    const key = firstStartKey(banner);

    // The README's quick start: the `try:` line printed by the first start, run by curl, to this port.
    const tryLine = /try:\s+(curl .*)$/m.exec(banner)?.[1];
    expect(tryLine).toBeDefined();
    const curl = tryLine!.replace(/http:\/\/[^/\s]+\//, `${baseUrl}/`);
    const { stdout } = await promisify(execFile)("sh", ["-c", `${curl} --max-time 15`], { timeout: 20_000 });
    const answer = JSON.parse(stdout) as { model: string; usage: { cost: string }; choices: Array<{ message: { content: string } }> };
    expect(answer.model).toBe("demo-chat");
    expect(answer.choices[0]!.message.content.length).toBeGreaterThan(0);
    expect(Number(answer.usage.cost)).toBeGreaterThan(0);
    const fast = await demoChat(baseUrl, key, "demo-fast");
    expect(fast.status).toBe(200);
    expect(Number(fast.body.usage?.cost)).toBeGreaterThan(0);

    const health = await podman(["healthcheck", "run", name]);
    expect(health.code).toBe(0);

    // podman stop sends the image's STOPSIGNAL; a process that ignored it would be killed after 30 s (exit 137).
    const stopped = Date.now();
    await ok(podman(["stop", "-t", "30", name], 60_000), "podman stop");
    expect(Date.now() - stopped).toBeLessThan(25_000);
    const exitCode = (await ok(podman(["inspect", "--format", "{{.State.ExitCode}}", name]), "inspect")).trim();
    expect(exitCode).toBe("0");
    expect(await logsOf(name)).toContain("SIGTERM: no new connections");

    // A new container on the same volume: the same database, no second first start, the key still works.
    await ok(podman(["rm", name]), "podman rm");
    await run(`${name}-again`);
    await waitForStatus(`${baseUrl}/readyz`, 200, 60_000, () => logsOf(`${name}-again`));
    expect(await logsOf(`${name}-again`)).not.toContain("First start");
    expect((await demoChat(baseUrl, key, "demo-chat")).status).toBe(200);
    await ok(podman(["rm", "-f", "-v", "-t", "10", `${name}-again`]), "podman rm");
  });

  it("on PostgreSQL, its URL and the server secret given as files (DATABASE_URL_FILE, GATEWAY_SECRET_FILE)", async () => {
    const database = `mgw_image_test_${process.pid}`;
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    await admin.query(`create database ${database}`);
    const secrets = mkdtempSync(join(tmpdir(), "mgw-image-secrets-"));
    // Readable by the image's user, as Kubernetes mounts a Secret (mode 0644).
    chmodSync(secrets, 0o755);
    const name = `${PREFIX}-postgres`;
    try {
      const url = new URL(POSTGRES_ADMIN_URL);
      url.pathname = `/${database}`;
      writeFileSync(join(secrets, "database-url"), `${url.toString()}\n`, { mode: 0o644 });
      writeFileSync(join(secrets, "server-secret"), "a-server-secret-for-the-image-test\n", { mode: 0o644 });
      const port = await freePort();
      // The host's network: the test's PostgreSQL listens on the host's loopback.
      await ok(
        podman([
          "run",
          "-d",
          "--name",
          name,
          "--read-only",
          "--tmpfs",
          "/tmp",
          "--network",
          "host",
          "-v",
          `${secrets}:/run/secrets/gateway:ro,z`,
          "-e",
          `PORT=${port}`,
          "-e",
          "HOST=127.0.0.1",
          "-e",
          "DATABASE_URL_FILE=/run/secrets/gateway/database-url",
          "-e",
          "GATEWAY_SECRET_FILE=/run/secrets/gateway/server-secret",
          GATEWAY_IMAGE,
          "serve",
          "--workers",
          "1",
        ]),
        "podman run",
      );
      const baseUrl = `http://127.0.0.1:${port}`;
      await waitForStatus(`${baseUrl}/readyz`, 200, 60_000, () => logsOf(name));
      const log = await logUntil(name, "API key:");
      expect(log).toContain(`postgres://${url.host}/${database}`);
      const answer = await demoChat(baseUrl, firstStartKey(log), "demo-chat");
      expect(answer.status).toBe(200);
      // The demo credit and the request's charge, in the database the file named.
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      const { rows } = await client.query<{ n: string }>("select count(*)::text as n from ledger");
      await client.end();
      expect(Number(rows[0]!.n)).toBeGreaterThanOrEqual(2);
    } finally {
      await podman(["rm", "-f", "-v", "-t", "10", name]);
      await admin.query(`drop database if exists ${database} with (force)`);
      await admin.end();
      rmSync(secrets, { recursive: true, force: true });
    }
  });
});
