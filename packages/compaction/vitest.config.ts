import { defineConfig, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

export default mergeConfig(
  shared,
  defineConfig({
    test: {
      // The log-touching tests run on SQLite and on a real PostgreSQL server (or CTXLOG_TEST_PG_URL).
      globalSetup: ["../memory/test/support/postgresServer.ts"]
    }
  })
)
