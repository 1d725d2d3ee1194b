import { defineConfig, mergeConfig } from "vitest/config"
import { shared } from "../vitest.shared.js"

export default mergeConfig(
  shared,
  defineConfig({
    test: {
      // The PostgreSQL compaction kill test: the memory package's throwaway server (or CTXLOG_TEST_PG_URL);
      // the packed-tarball tests: our packages packed once (test/support/packed.ts).
      globalSetup: ["../packages/memory/test/support/postgresServer.ts", "./test/support/packed.ts"]
    }
  })
)
