// Global set-up of `npm run test:deploy`: the local Node.js base (made once per machine), the
// gateway's image from Containerfile and the PostgreSQL image Compose is played with. Each step is
// bounded; their times and the image's size are printed for the CI log.
import { GATEWAY_IMAGE, ok, podman, POSTGRES_IMAGE, withPodmanEnv } from "./podman.js";

export default async function buildImages(): Promise<void> {
  const started = Date.now();
  const built = await withPodmanEnv("scripts/container/build-image.sh", [GATEWAY_IMAGE], 20 * 60_000);
  process.stderr.write(
    built.stderr
      .split("\n")
      .filter((line) => line.startsWith("build-image:") || line.startsWith("make-base-image:"))
      .join("\n") + "\n",
  );
  if (built.code !== 0) throw new Error(`scripts/container/build-image.sh exited ${built.code}:\n${built.stderr.slice(-6000)}`);
  const base = (await ok(withPodmanEnv("scripts/container/make-base-image.sh", [], 60_000), "make-base-image.sh")).trim().split("\n").pop()!;
  await ok(
    podman(["build", "--format", "docker", "--build-arg", `BASE_IMAGE=${base}`, "-t", POSTGRES_IMAGE, "test/deploy/postgres-image"], 10 * 60_000),
    "the PostgreSQL image's build",
  );
  process.stderr.write(`deploy images ready in ${Math.round((Date.now() - started) / 1000)} s\n`);
}
