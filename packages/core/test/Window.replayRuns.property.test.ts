/**
 * `Window.replay` folds a run of consecutive `MessageAppended` events as one (the history grows by all of
 * them at once). It must give what folding them one by one with `Window.evolve` gives: for event lists of
 * every type (generated from the schema, weighted towards appended messages with tool calls and
 * results), the two windows are equal, and stay equal as further events fold into each (the indexes
 * behind them agree too).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Arbitrary from "effect/Arbitrary"
import * as fc from "effect/FastCheck"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"
import { Window, WindowEvent } from "../src/index.js"

const anyEvent = Arbitrary.make(WindowEvent.WindowEvent)
const appended = Arbitrary.make(WindowEvent.MessageAppended)
// Ids from a small pool, so that tool results answer calls and removals find their messages.
const pooled = fc.integer({ min: 0, max: 12 }).map((n) => `id-${n}`)
const appendedPooled = fc.tuple(appended, pooled, fc.option(pooled, { nil: undefined })).map(([event, id, call]) => ({
  ...event,
  message: {
    ...event.message,
    id,
    parts:
      call === undefined
        ? event.message.parts
        : [...event.message.parts, { type: "tool_result" as const, toolCallId: call, content: "r", isError: false }]
  }
}))
const events = fc.array(fc.oneof({ arbitrary: appendedPooled, weight: 6 }, { arbitrary: anyEvent, weight: 1 }), {
  maxLength: 40
})

/** The window and what its state keeps beside it (the unseen tool results, the completed tool ids). */
const seen = (window: Window.Window) => ({
  window,
  unseen: Window.unseenToolResults(window),
  unseenCalls: [...Window.unseenToolCallIds(window)],
  completed: window.completedToolIds
})

const stepByStep = (list: ReadonlyArray<WindowEvent.WindowEvent>, from: Window.Window): Window.Window => {
  let window = from
  for (const event of list) window = Window.evolve(window, event)
  return window
}

describe("Window.replay of message runs", () => {
  it("equals folding the events one by one, and stays equal after more events", async () => {
    await fc.assert(
      fc.asyncProperty(events, events, async (first, then) => {
        await yieldToEventLoop()
        const replayed = Window.replay(first, Window.empty)
        const stepped = stepByStep(first, Window.empty)
        assert.deepStrictEqual(seen(replayed), seen(stepped))
        assert.deepStrictEqual(seen(stepByStep(then, replayed)), seen(stepByStep(then, stepped)))
        assert.deepStrictEqual(seen(Window.replay(then, replayed)), seen(stepByStep(then, stepped)))
      }),
      { numRuns: propertyRuns(150) }
    )
  })
})
