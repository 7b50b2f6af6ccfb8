// `npm run test:deploy`: the container image, Compose and the Kubernetes manifests, played with
// podman on this host (test/deploy). Apart from `npm test`: it needs root, podman and minutes.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/deploy/**/*.test.ts"],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: "forks",
    // One container scenario at a time: the host has two cores.
    fileParallelism: false,
    globalSetup: ["test/deploy/images.ts"],
    reporters: process.env.CI ? ["default", ["json", { outputFile: "test-output/vitest-deploy.json" }]] : ["default"],
  },
});
