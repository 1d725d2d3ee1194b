// Issue 39, defect 7 (the agent's half): the tool-output limit follows the context window the builder
// uses (after its clamps), not the raw `--context-window`. Ollama's builder floors the window at 4K: a
// 1,000-token `--context-window` renders with 4,096 tokens, so outputs may be that window's share.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { Provider } from "../src/index.js"

describe("the agent's tool-output limit (issue 39, defect 7)", () => {
  it.effect("is computed from the clamped context window", () =>
    Effect.gen(function* () {
      const provider = yield* Provider.make({ provider: "ollama", contextWindow: 1_000, maxOutputTokens: 100, env: {} })
      assert.strictEqual(provider.contextWindow, 4_096, "the builder floors the window")
      assert.strictEqual(
        provider.config.toolOutputLimits?.defaultChars,
        Provider.toolOutputChars(provider.contextWindow - provider.outputReserve, Number.POSITIVE_INFINITY)
      )
    })
  )
})
