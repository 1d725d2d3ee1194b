import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { SeamConfig } from "../src/index.js"

const config = (input: SeamConfig.SeamConfigInput) => SeamConfig.make(input)

describe("SeamConfig.levelFor", () => {
  const thresholds = { level1: 100, level2: 200, level3: 300 }

  it.effect("selects each level at its threshold and not one token below", () =>
    Effect.gen(function* () {
      const resolved = yield* config({ thresholds })
      const at = (tokens: number) => SeamConfig.levelFor(resolved, tokens, Option.none())
      assert.deepStrictEqual(at(0), Option.none())
      assert.deepStrictEqual(at(99), Option.none())
      assert.deepStrictEqual(at(100), Option.some(1))
      assert.deepStrictEqual(at(101), Option.some(1))
      assert.deepStrictEqual(at(199), Option.some(1))
      assert.deepStrictEqual(at(200), Option.some(2))
      assert.deepStrictEqual(at(201), Option.some(2))
      assert.deepStrictEqual(at(299), Option.some(2))
      assert.deepStrictEqual(at(300), Option.some(3))
      assert.deepStrictEqual(at(1_000_000), Option.some(3))
    })
  )

  it.effect("never selects a level below one already produced", () =>
    Effect.gen(function* () {
      const resolved = yield* config({ thresholds })
      assert.deepStrictEqual(SeamConfig.levelFor(resolved, 100, Option.some(2)), Option.some(2))
      assert.deepStrictEqual(SeamConfig.levelFor(resolved, 150, Option.some(3)), Option.some(3))
      assert.deepStrictEqual(SeamConfig.levelFor(resolved, 300, Option.some(2)), Option.some(3))
      assert.deepStrictEqual(SeamConfig.levelFor(resolved, 250, Option.some(1)), Option.some(2))
      // Below level 1's threshold nothing is due, whatever exists.
      assert.deepStrictEqual(SeamConfig.levelFor(resolved, 99, Option.some(3)), Option.none())
    })
  )

  it.effect("derives thresholds from a budget", () =>
    Effect.gen(function* () {
      const resolved = yield* config({ budget: 10_000 })
      assert.deepStrictEqual(resolved.thresholds, { level1: 6000, level2: 7500, level3: 9000 })
      assert.deepStrictEqual(SeamConfig.levelFor(resolved, 7499, Option.none()), Option.some(1))
      assert.deepStrictEqual(SeamConfig.levelFor(resolved, 7500, Option.none()), Option.some(2))
    })
  )
})

describe("SeamConfig.verbatimWindowStart", () => {
  it.effect("is 0 while history is no longer than the verbatim window", () =>
    Effect.gen(function* () {
      const resolved = yield* config({ budget: 1000, verbatimWindow: 4 })
      assert.strictEqual(SeamConfig.verbatimWindowStart(resolved, 0), 0)
      assert.strictEqual(SeamConfig.verbatimWindowStart(resolved, 3), 0)
      assert.strictEqual(SeamConfig.verbatimWindowStart(resolved, 4), 0)
      assert.strictEqual(SeamConfig.verbatimWindowStart(resolved, 5), 1)
      assert.strictEqual(SeamConfig.verbatimWindowStart(resolved, 12), 8)
    })
  )
})

describe("SeamConfig.make", () => {
  it.effect("rejects thresholds that do not increase, naming the field", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(config({ thresholds: { level1: 200, level2: 200, level3: 300 } }))
      assert.strictEqual(error._tag, "InvalidSeamConfig")
      assert.strictEqual(error.field, "thresholds")
      assert.include(error.message, "strictly increasing")
    })
  )

  it.effect("rejects a missing budget, a bad level value and a negative verbatim window", () =>
    Effect.gen(function* () {
      assert.strictEqual((yield* Effect.flip(config({}))).field, "thresholds")
      const level = yield* Effect.flip(config({ thresholds: { level1: 0, level2: 2, level3: 3 } }))
      assert.strictEqual(level.field, "thresholds.level1")
      const window = yield* Effect.flip(config({ budget: 100, verbatimWindow: -1 }))
      assert.strictEqual(window.field, "verbatimWindow")
      const summary = yield* Effect.flip(config({ budget: 100, summaryTokens: { level1: 10, level2: 1.5, level3: 1 } }))
      assert.strictEqual(summary.field, "summaryTokens.level2")
    })
  )
})
