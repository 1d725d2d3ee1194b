import { defineConfig, mergeConfig } from "vitest/config"
import { shared } from "../../vitest.shared.js"

export default mergeConfig(
  shared,
  defineConfig({
    test: {
      // Each worker runs its files one after another in one module graph (ADR 0134): a file no longer
      // loads effect and core's sources anew, which was half of this package's CPU time (103 s → 52 s).
      // Safe here: core's tests start no servers, set no process-wide state, and hold no module-level
      // mutable state of their own (a test that needs a fresh process, the lazy tokenizer's, starts one).
      isolate: false
    }
  })
)
