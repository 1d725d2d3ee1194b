// UsageReported v2: the provider's own context edits, and what they mean for calibration.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { EventCodec, Window, type WindowEvent } from "../src/index.js"

const usage = (id: string, extra: Partial<WindowEvent.EventOf<"UsageReported">> = {}): WindowEvent.WindowEvent => ({
  _tag: "UsageReported",
  id,
  provider: "anthropic",
  model: "claude-sonnet-4-5",
  estimatedInputTokens: 1000,
  inputTokens: 800,
  outputTokens: 10,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  ...extra
})

describe("UsageReported context edits", () => {
  it("calibration compares the estimate with the prompt before the provider cleared it", () => {
    const plain = Window.replay([usage("u1")])
    assert.strictEqual(Window.calibrationRatio(plain), 0.8)
    const cleared = Window.replay([
      usage("u2", { contextEdits: { clearedInputTokens: 300, clearedToolUses: 4, compactions: 0 } })
    ])
    assert.strictEqual(Window.calibrationRatio(cleared), 1.1)
  })

  it("a report after a server compaction (saving unknown) leaves the calibration alone", () => {
    const window = Window.replay([
      usage("u1"),
      usage("u2", { inputTokens: 100, contextEdits: { clearedInputTokens: 0, clearedToolUses: 0, compactions: 1 } })
    ])
    assert.strictEqual(Window.calibrationRatio(window), 0.8)
    assert.strictEqual(window.calibration.observations, 1)
  })

  it.effect("v3 round-trips; a v1 report carrying contextEdits is stripped to v1", () =>
    Effect.gen(function* () {
      const event = usage("u3", { contextEdits: { clearedInputTokens: 300, clearedToolUses: 4, compactions: 0 } })
      const [stored] = yield* EventCodec.encodeAll([event])
      assert.strictEqual(stored?.schemaVersion, 3)
      if (stored === undefined) return
      assert.deepStrictEqual(yield* EventCodec.decode(stored), event)
      const v1 = yield* EventCodec.decode({ ...stored, schemaVersion: 1 })
      assert.strictEqual(v1._tag === "UsageReported" ? v1.contextEdits : "other", undefined)
    })
  )

  it.effect("v3 keeps the 1-hour cache-write split; a v2 report carrying one is stripped to v2", () =>
    Effect.gen(function* () {
      const event = usage("u4", { cacheWriteTokens: 900, cacheWrite1hTokens: 600 })
      const [stored] = yield* EventCodec.encodeAll([event])
      if (stored === undefined) return assert.fail("nothing encoded")
      const decoded = yield* EventCodec.decode(stored)
      assert.strictEqual(decoded._tag === "UsageReported" ? decoded.cacheWrite1hTokens : "other", 600)
      const v2 = yield* EventCodec.decode({ ...stored, schemaVersion: 2 })
      assert.strictEqual(v2._tag === "UsageReported" ? v2.cacheWrite1hTokens : "other", undefined)
      assert.strictEqual(v2._tag === "UsageReported" ? v2.cacheWriteTokens : "other", 900)
    })
  )
})
