/**
 * The recall projection decodes only rows of `indexedTypes`: for events of every type (generated from
 * core's `WindowEvent` schema), an event that brings a message or a fact to the index is of one of them.
 */
import { WindowEvent } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as fc from "effect/FastCheck"
import { propertyRuns } from "../../../vitest.property.js"
import { factsOf, indexedTypes, messagesOf } from "../src/internal/indexing.js"

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
})
