import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { ContextService, EventLog, Ids, Message, RecallSource, TokenCounter, WindowRepository } from "../src/index.js"

const live = ContextService.layer.pipe(
  Layer.provideMerge(WindowRepository.layerReplay),
  Layer.provideMerge(EventLog.layerMemory),
  Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerSequential("t"), RecallSource.layerEmpty))
)

describe("smoke", () => {
  it.effect("appends and trims", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt("s", "You are helpful.")
      yield* ctx.appendMessages("s", [
        Message.user("hi"),
        Message.assistant("", [Message.toolCall("c1", "ls", { path: "." })]),
        Message.tool("c1", "a\nb"),
        Message.assistant("done")
      ])
      const out = yield* ctx.trimToBudget("s", 20)
      assert.isAbove(out.events.length, 0)
      assert.strictEqual(out.window.version, 6)
    }).pipe(Effect.provide(live))
  )
})
