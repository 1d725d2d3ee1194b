import { defineConfig, mergeConfig } from "vitest/config"
import { shared } from "../vitest.shared.js"

export default mergeConfig(
  shared,
  defineConfig({
    test: {
      // The PostgreSQL compaction kill test: the memory package's throwaway server (or CTXLOG_TEST_PG_URL).
      globalSetup: ["../packages/memory/test/support/postgresServer.ts"]
    }
  })
)
