import { defineConfig, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

export default mergeConfig(
  shared,
  defineConfig({
    test: {
      testTimeout: 120_000,
      // The memory package's real PostgreSQL server (or CTXLOG_TEST_PG_URL) for the `--pg` test.
      globalSetup: ["../../packages/memory/test/support/postgresServer.ts"]
    }
  })
)
