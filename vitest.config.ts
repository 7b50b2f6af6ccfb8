import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["src/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // The built `gateway` command, which the tests that start processes run, rebuilt when stale.
    globalSetup: ["test/support/build-cli.ts"],
    reporters: process.env.CI ? ["default", ["json", { outputFile: "test-output/vitest.json" }]] : ["default"],
  },
});
