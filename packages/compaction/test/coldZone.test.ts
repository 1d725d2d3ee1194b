// Issue 39, build item 5: the keep ceiling has a cold zone. The seed's ceiling is the context window less
// the system prompt and tools, the cold zone and the output reserve; before ADR 0126 only the summary's
// bound came off the target, so a hard compaction kept more verbatim history than the cold zone leaves.
import { ContextService, Message, type Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { TieredCompaction } from "../src/index.js"
import { filler, testLayer } from "./harness.js"

const config: TieredCompaction.Config = {
  budget: 10_000,
  softThreshold: 0.7,
  hardThreshold: 0.85,
  targetRatio: 0.5,
  cooldownTurns: 2,
  maxSummaryTokens: 300,
  coldZoneShare: 0.2
}

const verbatim = (window: Window.Window): number =>
  window.history.filter((message) => message.kind !== "summary").reduce((total, message) => total + message.tokens, 0)

const fixedOf = (window: Window.Window): number => window.tokens.total - window.tokens.history

const fillToHard = (stream: string) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    yield* ctx.setSystemPrompt(stream, `You are careful. ${filler(2000, "s")}`)
    let window = yield* ctx.load(stream)
    for (let i = 0; TieredCompaction.pressure(window, config) !== "Hard"; i++) {
      window = (yield* ctx.appendMessages(stream, [
        Message.user(`question ${i}: ${filler(400, "q")}`),
        Message.assistant(`answer ${i}: ${filler(400, "a")}`)
      ])).window
      if (i > 400) return yield* Effect.dieMessage("never reached Hard pressure")
    }
    return window
  })

describe("the keep ceiling's cold zone (issue 39, ADR 0126)", () => {
  it("is the budget's share, never less than the summary's bound; the default share is 0.05", () => {
    assert.strictEqual(TieredCompaction.coldZoneTokens(config), 2000)
    assert.strictEqual(TieredCompaction.coldZoneTokens({ ...config, coldZoneShare: 0 }), 300)
    assert.strictEqual(TieredCompaction.defaultColdZoneShare, 0.05)
    // An eighth of a 100,000-token budget is capped at 1,024 for the summary; the cold zone is 5%.
    assert.strictEqual(TieredCompaction.coldZoneTokens({ budget: 100_000 }), 5000)
    assert.strictEqual(TieredCompaction.coldZoneTokens({ budget: 8000 }), 1000)
  })

  it("is checked: a share at or above the target is refused, naming the field", () => {
    const refused = TieredCompaction.validate({ ...config, coldZoneShare: 0.5 })
    assert.isTrue(Either.isLeft(refused))
    if (Either.isLeft(refused)) assert.strictEqual(refused.left.field, "coldZoneShare")
    assert.isTrue(Either.isLeft(TieredCompaction.validate({ ...config, coldZoneShare: -0.1 })))
    assert.isTrue(Either.isRight(TieredCompaction.validate({ ...config, coldZoneShare: 0 })))
  })

  it.effect("is the target less the fixed partitions and the cold zone", () =>
    Effect.gen(function* () {
      const window = yield* fillToHard("ceiling")
      assert.strictEqual(
        TieredCompaction.keepCeiling(window, { ...config, calibrate: false }),
        5000 - fixedOf(window) - 2000
      )
      assert.strictEqual(
        TieredCompaction.keepCeiling(window, { ...config, calibrate: false }, 0.4),
        4000 - fixedOf(window) - 2000
      )
    }).pipe(Effect.provide(testLayer))
  )

  it.effect(
    "a hard compaction keeps no more verbatim history than the target less the fixed part and the cold zone",
    () =>
      Effect.gen(function* () {
        const before = yield* fillToHard("hard")
        const fixed = fixedOf(before)
        const result = yield* TieredCompaction.maybeCompact("hard", config)
        assert.strictEqual(result._tag, "Compacted")
        const kept = verbatim(result.window)
        assert.isAbove(kept, 0)
        // Before the cold zone, the ceiling was 5,000 − fixed − 300 (the summary's bound): ~1,700 more.
        assert.isAtMost(kept, 5000 - fixed - 2000)
        // With the cold zone at the summary's bound the same window keeps more: the share is what cut it.
        const ctx = yield* ContextService.ContextService
        yield* fillToHard("bound")
        const bound = yield* TieredCompaction.maybeCompact("bound", { ...config, coldZoneShare: 0 })
        assert.isAbove(verbatim(bound.window), kept)
        assert.isAtMost(verbatim(bound.window), 5000 - fixed - 300)
        assert.strictEqual((yield* ctx.load("bound")).history.filter((m) => m.kind === "summary").length, 1)
      }).pipe(Effect.provide(testLayer))
  )
})
