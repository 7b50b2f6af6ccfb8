// deploy/kubernetes: the overlays render (kubectl kustomize) to the YAML checked in under rendered/,
// and the podman overlay's rendering, played with `podman kube play` against the host's PostgreSQL,
// migrates a new database, becomes ready and answers a demo request.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { demoChat, firstStartKey, freePort, logsOf, logUntil, ok, podman, ROOT, waitForStatus } from "./podman.js";

const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const rendered = (overlay: string) => readFileSync(join(ROOT, "deploy", "kubernetes", "rendered", `${overlay}.yaml`), "utf8");

describe("the Kubernetes manifests", () => {
  it.each(["production", "podman"])("overlay %s renders to the checked-in YAML", async (overlay) => {
    const { stdout } = await promisify(execFile)("kubectl", ["kustomize", join(ROOT, "deploy", "kubernetes", "overlays", overlay)], { timeout: 60_000 });
    expect(stdout).toBe(rendered(overlay));
  });

  it("the production rendering has what a cluster needs: probes, resources, a read-only non-root pod, a PDB", () => {
    const text = rendered("production");
    for (const kind of ["Namespace", "ConfigMap", "Secret", "Service", "Deployment", "PodDisruptionBudget"]) expect(text).toContain(`kind: ${kind}\n`);
    expect(text).toContain("path: /readyz");
    expect(text).toContain("path: /healthz");
    expect(text).toContain("readOnlyRootFilesystem: true");
    expect(text).toContain("runAsNonRoot: true");
    expect(text).toMatch(/requests:\n\s+cpu: /);
    expect(text).toContain("replicas: 3");
    expect(text).toContain("image: registry.example.com/model-gateway:0.1.0");
  });

  it("podman kube play of the rendered podman overlay migrates, becomes ready and answers", async () => {
    const database = `mgw_kube_play_${process.pid}`;
    const port = await freePort();
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    await admin.query(`create database ${database}`);
    const dir = mkdtempSync(join(tmpdir(), "mgw-kube-"));
    const file = join(dir, "podman.yaml");
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${database}`;
    const yaml = rendered("podman").replace("postgres://postgres@127.0.0.1:5432/mgw_kube_play", url.toString()).replace('value: "18080"', `value: "${port}"`);
    writeFileSync(file, yaml);
    const logs = () => logsOf("model-gateway-pod-0-gateway");
    try {
      await ok(podman(["kube", "play", file], 120_000), "podman kube play");
      const baseUrl = `http://127.0.0.1:${port}`;
      await waitForStatus(`${baseUrl}/readyz`, 200, 90_000, logs);
      const answer = await demoChat(baseUrl, firstStartKey(await logUntil("model-gateway-pod-0-gateway", "API key:")), "demo-chat");
      expect(answer.status).toBe(200);
      expect(Number(answer.body.usage?.cost)).toBeGreaterThan(0);
      // The config file came from the ConfigMap, the database URL from the mounted file.
      expect(await logs()).toContain("config: /etc/gateway/gateway.config.yaml");
      expect(await logs()).toContain(`/${database}`);
    } finally {
      await podman(["kube", "down", file], 120_000);
      // podman 4.3 keeps the volumes it made of the ConfigMaps.
      await podman(["volume", "rm", "-f", "model-gateway-config", "model-gateway-secrets"]);
      await admin.query(`drop database if exists ${database} with (force)`);
      await admin.end();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
