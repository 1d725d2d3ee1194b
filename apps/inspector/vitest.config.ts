import { defineConfig, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

export default mergeConfig(
  shared,
  defineConfig({
    test: {
      // CLI tests start child processes (tsx on the sources): slow on a busy machine, hence the timeout.
      testTimeout: 180_000,
      // The `--pg` test needs a real PostgreSQL server: the memory package's setup starts a throwaway
      // one (or uses CTXLOG_TEST_PG_URL) and fails loudly when PostgreSQL is not installed.
      globalSetup: ["../../packages/memory/test/support/postgresServer.ts"]
    }
  })
)
