// ADR 0060: four doors became functions in 0.2 (`ContextService.layer`, `ContextService.layerMemory`,
// `WindowRepository.layerReplay`, `EventLog.layerMemory`); their 0.1 value form keeps working, deprecated,
// for one minor version. Both forms go through `Effect.provide` here and type-check as `Layer`s.
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ContextService, EventLog, Ids, Message, RecallSource, TokenCounter, WindowRepository } from "../src/index.js"

const appendOne = Effect.gen(function* () {
  const ctx = yield* ContextService.ContextService
  const { window } = yield* ctx.appendMessages("s", [Message.user("hello")])
  return window.history.length
})

const logVersion = Effect.flatMap(EventLog.EventLog, (log) => log.version("s"))

// The 0.1 value form, typed as the 0.1 code typed it.
const memoryValue: Layer.Layer<ContextService.ContextService | EventLog.EventLog> = ContextService.layerMemory
const logValue: Layer.Layer<EventLog.EventLog> = EventLog.layerMemory
const replayValue: Layer.Layer<WindowRepository.WindowRepository, never, EventLog.EventLog> =
  WindowRepository.layerReplay
const serviceValue: Layer.Layer<ContextService.ContextService, never, ContextService.Requirements> =
  ContextService.layer

const ports = Layer.mergeAll(TokenCounter.layerHeuristic(), Ids.layerSequential("t"), RecallSource.layerEmpty)

describe("the 0.1 value form of the doors that became functions", () => {
  it("each door is a function and a layer, and keeps Function.prototype", () => {
    const doors: ReadonlyArray<() => unknown> = [
      ContextService.layer,
      ContextService.layerMemory,
      WindowRepository.layerReplay,
      EventLog.layerMemory
    ]
    for (const door of doors) {
      assert.strictEqual(typeof door, "function")
      assert.isTrue(Layer.isLayer(door))
      assert.isTrue(Layer.isLayer(door()))
      assert.isTrue(Layer.isLayer(door.call(undefined)))
    }
  })

  it.effect("ContextService.layerMemory: the value and the call provide the same stack", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* appendOne.pipe(Effect.provide(memoryValue)), 1)
      assert.strictEqual(yield* appendOne.pipe(Effect.provide(ContextService.layerMemory)), 1)
      assert.strictEqual(yield* appendOne.pipe(Effect.provide(ContextService.layerMemory())), 1)
    })
  )

  it.effect("the value form is built anew on each provide, as the 0.1 value was: a fresh, empty log", () =>
    Effect.gen(function* () {
      const first = yield* Effect.zipRight(appendOne, logVersion).pipe(Effect.provide(ContextService.layerMemory))
      const second = yield* logVersion.pipe(Effect.provide(ContextService.layerMemory))
      assert.strictEqual(first, 1)
      assert.strictEqual(second, 0)
      assert.strictEqual(yield* logVersion.pipe(Effect.provide(logValue)), 0)
    })
  )

  it.effect("the value forms compose with Layer.provide / provideMerge like any layer", () =>
    Effect.gen(function* () {
      const byValues = serviceValue.pipe(
        Layer.provideMerge(replayValue),
        Layer.provideMerge(EventLog.layerMemory),
        Layer.provideMerge(ports)
      )
      const byCalls = ContextService.layer().pipe(
        Layer.provideMerge(WindowRepository.layerReplay()),
        Layer.provideMerge(EventLog.layerMemory()),
        Layer.provideMerge(ports)
      )
      assert.strictEqual(yield* Effect.zipRight(appendOne, logVersion).pipe(Effect.provide(byValues)), 1)
      assert.strictEqual(yield* Effect.zipRight(appendOne, logVersion).pipe(Effect.provide(byCalls)), 1)
    })
  )

  it.effect("a call still takes its options (the value form is only the defaults)", () =>
    Effect.gen(function* () {
      const counter = yield* TokenCounter.TokenCounter.pipe(
        Effect.provide(ContextService.layerMemory({ tokenCounter: TokenCounter.layerHeuristic() }))
      )
      const byDefault = yield* TokenCounter.TokenCounter.pipe(Effect.provide(ContextService.layerMemory))
      assert.strictEqual(counter.name, "heuristic(4)")
      assert.strictEqual(byDefault.name, "o200k_base")
    })
  )
})
