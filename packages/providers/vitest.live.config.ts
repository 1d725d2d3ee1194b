import { defineConfig, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

// The contract tests against the real services: `pnpm --filter @ctxlog/providers test:live` (keys needed).
export default mergeConfig(shared, defineConfig({ test: { include: ["test/live/**/*.live.ts"] } }))
