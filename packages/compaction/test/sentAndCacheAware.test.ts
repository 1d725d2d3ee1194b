// Issue 37 item 6: the tiers weigh what the builder sends (`Config.unsentTokens`), and the cache-aware option
// (`Config.preferCachedPrefix`) leaves a window that still fits alone, keeping its cached prefix.
import { ContextService } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { TieredCompaction } from "../src/index.js"
import { fillWithTools, testLayer } from "./harness.js"

const config = {
  budget: 4000,
  softThreshold: 0.7,
  hardThreshold: 0.85,
  targetRatio: 0.5,
  cooldownTurns: 2,
  maxSummaryTokens: 300,
  prune: { keepRecent: 2, minChars: 200 }
} satisfies TieredCompaction.Config

describe("the tiers weigh what is sent (issue 37 item 6)", () => {
  it.effect("tokens the builder does not send come off the pressure", () =>
    Effect.gen(function* () {
      const window = yield* fillWithTools(config, "u", "Soft")
      assert.strictEqual(TieredCompaction.pressure(window, config), "Soft")
      const unsent = window.tokens.total
      const weighed = { ...config, unsentTokens: () => unsent }
      assert.strictEqual(TieredCompaction.sentTokens(window, weighed), 0)
      assert.strictEqual(TieredCompaction.pressure(window, weighed), "None")
      const result = yield* TieredCompaction.maybeCompact("u", weighed)
      assert.strictEqual(result._tag, "NoChange")
    }).pipe(Effect.provide(testLayer))
  )
})

describe("the cache-aware option (issue 37 item 6)", () => {
  it.effect("at Soft pressure it leaves the window (and its cached prefix) whole; the default prunes", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* fillWithTools(config, "a", "Soft")
      const before = yield* ctx.load("a")
      const aware = yield* TieredCompaction.maybeCompact("a", { ...config, preferCachedPrefix: true })
      assert.strictEqual(aware._tag, "NoChange")
      assert.strictEqual((yield* ctx.load("a")).version, before.version)
      const mid = yield* TieredCompaction.maybeSoftCompactMidIteration("a", { ...config, preferCachedPrefix: true })
      assert.strictEqual(mid._tag, "NoChange")
      const proactive = yield* TieredCompaction.maybeProactiveCompress("a", {
        ...config,
        proactiveThreshold: 0.6,
        preferCachedPrefix: true
      })
      assert.strictEqual(proactive._tag, "NoChange")
      const byDefault = yield* TieredCompaction.maybeCompact("a", config)
      assert.strictEqual(byDefault._tag, "SoftCompacted")
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("at Hard pressure it compacts as the default does", () =>
    Effect.gen(function* () {
      yield* fillWithTools(config, "h", "Hard")
      const result = yield* TieredCompaction.maybeCompact("h", { ...config, preferCachedPrefix: true })
      assert.notStrictEqual(result._tag, "NoChange")
    }).pipe(Effect.provide(testLayer))
  )
})
