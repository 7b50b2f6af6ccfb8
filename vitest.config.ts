import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    // Containers, Compose and Kubernetes manifests: `npm run test:deploy` (vitest.deploy.config.ts).
    exclude: [...configDefaults.exclude, "test/deploy/**"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The built `gateway` command, which the tests that start processes run, rebuilt when stale.
    globalSetup: ["test/support/build-cli.ts"],
    reporters: process.env.CI ? ["default", ["json", { outputFile: "test-output/vitest.json" }]] : ["default"],
  },
});
