import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

/**
 * This package runs vitest 4 (its own devDependency: LangGraph's conformance suite,
 * `@langchain/langgraph-checkpoint-validation`, is built on vitest 4 and registers its cases through the
 * globals). The settings mirror `vitest.shared.ts` at the root, written out here rather than imported,
 * because that file's `vitest/config` resolves to the root's vitest 3.
 */
export default defineConfig({
  resolve: { conditions: ["@ctxlog/source"] },
  ssr: { resolve: { conditions: ["@ctxlog/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    globals: true,
    // A real PostgreSQL server for the PostgreSQL tests (or CTXLOG_TEST_PG_URL), from @ctxlog/memory's
    // test support: started once, stopped (and deleted) after the run.
    globalSetup: ["../memory/test/support/postgresServer.ts"],
    pool: "forks",
    // At least two workers on a 2-core machine, as vitest.shared.ts (ADR 0134).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A worker's files share one process and module graph, as vitest.shared.ts (ADR 0149).
    isolate: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000
  }
})
