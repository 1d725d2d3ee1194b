import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import {
  ContextService,
  EventLog,
  Ids,
  Message,
  RecallSource,
  TokenCounter,
  Transcript,
  WindowRepository
} from "../src/index.js"

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

describe("transcripts", () => {
  it.effect("every shared transcript imports and appends without a pairing error", () =>
    Effect.gen(function* () {
      const { readdirSync, readFileSync } = yield* Effect.promise(() => import("node:fs"))
      const dir = new URL("../../../../shared/transcripts/", import.meta.url)
      const ctx = yield* ContextService.ContextService
      for (const file of readdirSync(dir).filter((name) => name.endsWith(".json"))) {
        const inputs = yield* Transcript.fromTranscriptJson(JSON.parse(readFileSync(new URL(file, dir), "utf8")))
        const out = yield* ctx.appendMessages(file, inputs)
        assert.strictEqual(out.window.history.length, inputs.length)
      }
    }).pipe(Effect.provide(live))
  )
})
