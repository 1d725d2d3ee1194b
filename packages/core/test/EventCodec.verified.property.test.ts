/**
 * `EventCodec.decodeVerified` trusts a current-version row's JSON instead of a second Schema pass. That
 * is sound only if the encoded form of every event is its decoded form: for events of every type
 * (generated from the `WindowEvent` schema), what `encodeAll` stores parses back to exactly what the
 * full `decode` returns, and `decodeVerified` returns the same. Older versions and malformed rows take
 * the full decode, with its errors.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"
import { EventCodec, WindowEvent } from "../src/index.js"

describe("EventCodec.decodeVerified", () => {
  it("returns what the full decode returns, for events of every type", async () => {
    const seen = new Set<string>()
    await fc.assert(
      fc.asyncProperty(Arbitrary.make(WindowEvent.WindowEvent), async (event) => {
        await yieldToEventLoop()
        seen.add(event._tag)
        const [stored] = Effect.runSync(EventCodec.encodeAll([event]))
        if (stored === undefined) return false
        const full = Effect.runSync(EventCodec.decode(stored))
        const verified = Effect.runSync(EventCodec.decodeVerified(stored))
        assert.deepStrictEqual(verified, full)
        assert.deepStrictEqual(JSON.parse(stored.data), full)
        return true
      }),
      { numRuns: propertyRuns(300) }
    )
    assert.isAtLeast(seen.size, WindowEvent.eventTypes.length - 3)
  })

  it.effect("upcasts an older version and fails on a malformed row as the full decode does", () =>
    Effect.gen(function* () {
      const v1 = {
        type: "HistoryCleared",
        schemaVersion: 1,
        data: JSON.stringify({ _tag: "HistoryCleared", id: "e1" })
      }
      assert.deepStrictEqual(yield* EventCodec.decodeVerified(v1), yield* EventCodec.decode(v1))
      for (const bad of [
        { type: "MessageAppended", schemaVersion: WindowEvent.schemaVersions.MessageAppended, data: "{not json" },
        {
          type: "MessageAppended",
          schemaVersion: WindowEvent.schemaVersions.MessageAppended,
          data: JSON.stringify({ _tag: "HistoryCleared", id: "e1" })
        },
        { type: "Nonsense", schemaVersion: 1, data: "{}" }
      ]) {
        const verified = yield* Effect.either(EventCodec.decodeVerified(bad, { stream: "s", version: 7 }))
        const full = yield* Effect.either(EventCodec.decode(bad, { stream: "s", version: 7 }))
        assert.isTrue(Either.isLeft(verified))
        assert.deepStrictEqual(verified, full)
      }
    })
  )
})
