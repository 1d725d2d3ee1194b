import { defineConfig, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

// CLI tests start child processes (tsx on the sources): slow on a busy machine, hence the timeout.
export default mergeConfig(shared, defineConfig({ test: { testTimeout: 180_000 } }))
