/**
 * The recall projection decodes only rows of `indexedTypes`: for events of every type (generated from
 * core's `WindowEvent` schema), an event that brings a message or a fact to the index is of one of them.
 */
import { EventCodec, Message, WindowEvent } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import { propertyRuns } from "../../../vitest.property.js"
import { factsOf, indexedOf, indexedTypes, messagesOf } from "../src/internal/indexing.js"

describe("recall indexing", () => {
  it("every event that gives the index a message or a fact is of a type the projection decodes", () => {
    const seen = new Set<string>()
    fc.assert(
      fc.property(Arbitrary.make(WindowEvent.WindowEvent), (event) => {
        seen.add(event._tag)
        const gives = messagesOf(event).length > 0 || factsOf(event).length > 0
        return !gives || indexedTypes.has(event._tag)
      }),
      { numRuns: propertyRuns(300) }
    )
    // The generator reached (nearly) every type, so the property speaks for all of them.
    assert.isAtLeast(seen.size, WindowEvent.eventTypes.length - 3)
    for (const type of indexedTypes) assert.isTrue(WindowEvent.isEventType(type), `"${type}" is an event type`)
  })

  it("reading a stored event's JSON gives the index what decoding it gives, for events of every indexed type", () => {
    const read = new Set<string>()
    fc.assert(
      fc.property(Arbitrary.make(WindowEvent.WindowEvent), (event) => {
        const [stored] = Effect.runSync(EventCodec.encodeAll([event]))
        if (stored === undefined) return false
        const decoded = Effect.runSync(EventCodec.decode(stored))
        const fast = indexedOf(stored.type, stored.schemaVersion, stored.data)
        if (!indexedTypes.has(stored.type)) return true
        read.add(stored.type)
        assert.deepStrictEqual(fast, { messages: messagesOf(decoded), facts: factsOf(decoded) })
        // An older schema version is decoded (upcast), not read.
        assert.isUndefined(indexedOf(stored.type, stored.schemaVersion - 1, stored.data))
        return true
      }),
      { numRuns: propertyRuns(300) }
    )
    assert.isAtLeast(read.size, indexedTypes.size - 1)
  })

  it("data that is not what the index reads is left to the decoder", () => {
    const message: Message.Message = { id: "m", role: "user", kind: "chat", parts: [Message.text("hi")], tokens: 1 }
    const ok = JSON.stringify({ _tag: "MessageAppended", id: "e", message })
    const version = WindowEvent.schemaVersions.MessageAppended
    assert.deepStrictEqual(indexedOf("MessageAppended", version, ok)?.messages, [message])
    for (const bad of [
      "{not json",
      JSON.stringify({ _tag: "MessagesInjected", id: "e", message }),
      JSON.stringify({ _tag: "MessageAppended", id: "e", message: { ...message, tokens: "1" } }),
      JSON.stringify({ _tag: "MessageAppended", id: "e", message: { ...message, parts: [null] } }),
      JSON.stringify({ _tag: "MessageAppended", id: "e" })
    ]) {
      assert.isUndefined(indexedOf("MessageAppended", version, bad), bad)
    }
    assert.isUndefined(indexedOf("NoSuchEvent", version, ok))
  })
})
