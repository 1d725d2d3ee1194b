// Issue 38 (speed): a prediction's work per model call is what changed since the previous call, not
// the window. Counted, not timed: the chain hashes `CacheModel.predict` computes per call (its `hash`
// option counts them) at 40 calls and at 200, over a stream whose window only grows (no compaction).
import { ContextService, EventHash, EventLog, Ids, Message, Window } from "@ctxlog/core"
import { assert, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { CacheModel, CtxBuilder, RenderRecord } from "../src/index.js"

const config: CtxBuilder.ProviderConfig = { provider: "openai", model: "gpt-4.1", contextWindow: 1_000_000 }

/** `calls` model calls, each after a user message, an answer with a tool call and its result. */
const streamOf = (stream: string, calls: number) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    yield* ctx.appendMessages(stream, [Message.user("start")])
    for (let index = 0; index < calls; index++) {
      const built = CtxBuilder.forProvider(config).build(yield* ctx.load(stream), {})
      if (Either.isLeft(built)) return yield* Effect.die(built.left)
      yield* RenderRecord.recordRender(
        stream,
        built.right,
        { provider: config.provider, model: config.model },
        { config, options: {} }
      )
      yield* ctx.appendMessages(stream, [
        Message.assistant(`looking ${index}`, [Message.toolCall(`call_${index}`, "read", { path: `f${index}.ts` })]),
        Message.tool(`call_${index}`, `contents of file ${index}`),
        Message.user(`and now step ${index + 1}?`)
      ])
    }
    const log = yield* EventLog.EventLog
    const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
    return envelopes.map(
      (envelope, index): CacheModel.TimedEvent => ({
        version: envelope.version,
        recordedAt: index * 1000,
        event: envelope.event
      })
    )
  })

const hashesPerCall = (events: ReadonlyArray<CacheModel.TimedEvent>) => {
  let hashes = 0
  const report = CacheModel.predict(events, {
    unknownPrefix: 0,
    hash: (text) => {
      hashes++
      return EventHash.sha256(text)
    }
  })
  return { calls: report.calls.length, perCall: hashes / report.calls.length, report }
}

layer(ContextService.layerMemory({ ids: Ids.layerSequential("w") }))("CacheModel's work per call", (it) => {
  it.effect(
    "hashes the blocks that changed since the previous call: the same count per call at 40 calls and at 200",
    () =>
      Effect.gen(function* () {
        const short = hashesPerCall(yield* streamOf("short", 40))
        const long = hashesPerCall(yield* streamOf("long", 200))
        assert.strictEqual(short.calls, 40)
        assert.strictEqual(long.calls, 200)
        // Each call adds three messages (and re-renders the last one): a handful of new blocks, whatever
        // the window's length. Hashing every block of every render would be ~100 per call at 200 calls.
        assert.isAtMost(short.perCall, 6)
        assert.isAtMost(long.perCall, short.perCall * 1.1)
        // The prefix cache still reads what earlier calls wrote.
        assert.isAbove(long.report.calls.at(-1)?.predicted.cacheRead ?? 0, 0)
      })
  )

  it.effect("reads the windows a caller already folded (windowAt) and gives the same report as its own fold", () =>
    Effect.gen(function* () {
      const events = yield* streamOf("folded", 30)
      // The caller's fold: the window just before each render, by version.
      const windows = new Map<number, Window.Window>()
      let window = Window.empty
      for (const entry of events) {
        if (entry.event._tag === "PromptRendered") windows.set(entry.version, window)
        window = Window.evolve(window, entry.event)
      }
      const own = CacheModel.predict(events, { unknownPrefix: 0 })
      const given = CacheModel.predict(events, { unknownPrefix: 0, windowAt: (version) => windows.get(version) })
      // Given for every other render only: the rest are folded to from the last window given.
      const some = CacheModel.predict(events, {
        unknownPrefix: 0,
        windowAt: (version) => (version % 2 === 0 ? windows.get(version) : undefined)
      })
      assert.strictEqual(own.calls.length, 30)
      assert.isTrue(own.calls.every((call) => call.rebuilt))
      assert.deepStrictEqual(given, own)
      assert.deepStrictEqual(some, own)
      // The given window is the one the render is rebuilt on: an empty one cannot rebuild any render.
      const wrong = CacheModel.predict(events, { unknownPrefix: 0, windowAt: () => Window.empty })
      assert.isTrue(wrong.calls.every((call) => !call.rebuilt))
    })
  )
})
