import { defineConfig, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

export default mergeConfig(
  shared,
  defineConfig({
    test: {
      // A real PostgreSQL server for the PostgreSQL tests (or CTXLOG_TEST_PG_URL); fails loudly if neither.
      globalSetup: ["./test/support/postgresServer.ts"]
    }
  })
)
