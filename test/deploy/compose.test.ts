// deploy/compose.yaml started with podman-compose, as its one command: the gateway and PostgreSQL
// (the test's image: Debian's PostgreSQL started like the public image; no registry here), data in
// named volumes. The gateway waits for PostgreSQL, migrates, answers a demo request billed in
// PostgreSQL, and `down` removes the containers.
import { describe, expect, it } from "vitest";
import { demoChat, firstStartKey, freePort, GATEWAY_IMAGE, logsOf, logUntil, ok, podman, POSTGRES_IMAGE, waitForStatus, withPodmanEnv } from "./podman.js";

const PROJECT = `mgw-compose-test-${process.pid}`;

describe("deploy/compose.yaml", () => {
  it("podman-compose up -d: the gateway on PostgreSQL answers; down removes it all", async () => {
    const port = await freePort();
    const env = { POSTGRES_IMAGE, GATEWAY_IMAGE, GATEWAY_PORT: String(port), POSTGRES_PASSWORD: "compose-test-password" };
    const compose = (args: string[], timeoutMs: number) => withPodmanEnv("podman-compose", ["-p", PROJECT, "-f", "deploy/compose.yaml", ...args], timeoutMs, env);
    const gateway = `${PROJECT}_gateway_1`;
    const logs = () => logsOf(gateway);
    try {
      await ok(compose(["up", "-d"], 180_000), "podman-compose up -d");
      const baseUrl = `http://127.0.0.1:${port}`;
      await waitForStatus(`${baseUrl}/readyz`, 200, 120_000, logs);
      // It may have started before PostgreSQL took connections: then it exited and was restarted.
      const log = await logUntil(gateway, "API key:");
      expect(log).toContain("listening on http://127.0.0.1:8080 (postgres://postgres:5432/gateway");
      const answer = await demoChat(baseUrl, firstStartKey(log), "demo-chat");
      expect(answer.status).toBe(200);
      expect(Number(answer.body.usage?.cost)).toBeGreaterThan(0);
      const volumes = await ok(podman(["volume", "ls", "--format", "{{.Name}}"]), "volume ls");
      expect(volumes).toContain(`${PROJECT}_postgres-data`);
      expect(volumes).toContain(`${PROJECT}_gateway-data`);
    } finally {
      const down = await compose(["down", "-v"], 120_000);
      const left = await podman(["ps", "-a", "--filter", `name=${PROJECT}`, "--format", "{{.Names}}"]);
      for (const name of left.stdout.split("\n").filter(Boolean)) await podman(["rm", "-f", "-t", "0", name]);
      for (const volume of ["postgres-data", "gateway-data"]) await podman(["volume", "rm", "-f", `${PROJECT}_${volume}`]);
      // podman-compose 1.0 leaves the project's network behind.
      await podman(["network", "rm", "-f", `${PROJECT}_default`]);
      expect(down.code).toBe(0);
    }
  });
});
