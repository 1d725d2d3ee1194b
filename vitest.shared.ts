import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"

/**
 * Shared vitest settings: tests run on TypeScript sources through the `@ctxlog/source` export condition.
 * Sized for a shared, loaded 2-core CI box: test files run in forked worker processes (a crash or a
 * blocked loop stays in that worker), timeouts leave a wide margin for a machine busy with other work, and
 * the teardown window gives the last worker-to-reporter RPC time to land under load.
 *
 * Worker count: vitest's default is one fewer than the cores, which is one on the 2-core CI machine, so a
 * package's files ran one at a time and the package CI ran last kept one core idle while the other
 * waited on PostgreSQL, a child process or npm (issue 42, ADR 0134). At least two workers split each
 * package across two processes; on a bigger machine the default stands.
 */
const workers = Math.max(2, availableParallelism() - 1)

export const shared = defineConfig({
  resolve: { conditions: ["@ctxlog/source"] },
  ssr: { resolve: { conditions: ["@ctxlog/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    maxWorkers: workers,
    // A worker runs its files one after another in one process and one module graph (ADR 0149): each
    // file no longer loads effect and the workspace sources anew (most of a package's CPU time). What a
    // file changes in the process is then seen by the next: tests count work from where they start,
    // name their environment variables per file, and stop what they start.
    isolate: false,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    teardownTimeout: 30_000
  }
})
