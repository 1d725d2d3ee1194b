import { defineConfig } from "vitest/config"

/**
 * Shared vitest settings: tests run on TypeScript sources through the `@ctxlog/source` export condition.
 * Sized for a shared, loaded 2-core CI box: each test file runs in its own forked process (a crash or a
 * blocked loop stays in that file), timeouts leave a wide margin for a machine busy with other work, and
 * the teardown window gives the last worker-to-reporter RPC time to land under load.
 */
export const shared = defineConfig({
  resolve: { conditions: ["@ctxlog/source"] },
  ssr: { resolve: { conditions: ["@ctxlog/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000
  }
})
