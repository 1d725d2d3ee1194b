import { defineConfig } from "vitest/config"

/** Shared vitest settings: tests run on TypeScript sources through the `@ctxlog/source` export condition. */
export const shared = defineConfig({
  resolve: { conditions: ["@ctxlog/source"] },
  ssr: { resolve: { conditions: ["@ctxlog/source"] } },
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000
  }
})
