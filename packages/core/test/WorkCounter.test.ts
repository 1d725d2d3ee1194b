// Work counters are effect Metrics (ADR 0160): an increment on the synchronous path is what
// `Metric.value` reads, and a reading counts the change since it was taken, leaving the metric alone.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import { Message, Window, WorkCounter } from "../src/index.js"
import { work } from "../src/internal/work.js"

describe("WorkCounter", () => {
  it.effect("an add is what Metric.value reads; a reading is the change since it was taken or reset", () =>
    Effect.gen(function* () {
      const counter = WorkCounter.make("ctxlog.test.work_counter", "A counter of this test.")
      const start = (yield* Metric.value(counter)).count
      const reading = WorkCounter.since({ counter })
      WorkCounter.add(counter)
      WorkCounter.add(counter, 4)
      assert.strictEqual((yield* Metric.value(counter)).count, start + 5)
      assert.strictEqual(WorkCounter.value(counter), start + 5)
      assert.strictEqual(reading.counter, 5)
      assert.deepStrictEqual({ ...reading }, { counter: 5 })
      assert.strictEqual(JSON.stringify(reading), '{"counter":5}')
      reading.reset()
      assert.strictEqual(reading.counter, 0)
      WorkCounter.add(counter, 2)
      assert.strictEqual(reading.counter, 2)
      // The metric itself was never zeroed.
      assert.strictEqual((yield* Metric.value(counter)).count, start + 7)
    })
  )

  it.effect("the projection's counters are metrics of the registry: a fold shows in Metric.value", () =>
    Effect.gen(function* () {
      const before = (yield* Metric.value(work.copied)).count
      Window.evolve(Window.empty, {
        _tag: "MessageAppended",
        id: "e1",
        message: { id: "m1", role: "user", kind: "chat", parts: [Message.text("hi")], tokens: 1 }
      })
      assert.strictEqual((yield* Metric.value(work.copied)).count - before, 1)
      const names = (yield* Metric.snapshot).map((pair) => pair.metricKey.name)
      assert.include(names, "ctxlog.core.copied")
    })
  )
})
