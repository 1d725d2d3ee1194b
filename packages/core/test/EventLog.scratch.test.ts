// The scratch log (`EventLog.layerScratch`, `ContextService.layerMemory({ scratch: true })`): what a
// replay writes its own events to. Events are kept as given (the same objects read back), the
// expected-version check stays, an append touches only what it writes (the envelopes already held are
// the same objects after it), and a window over it equals the one over the in-memory store.
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { ContextService, EventLog, Message, Window, type WindowEvent } from "../src/index.js"

const read = (log: EventLog.EventLog.Service, stream: string, options?: EventLog.ReadOptions) =>
  Effect.map(Stream.runCollect(log.read(stream, options)), Chunk.toReadonlyArray)

const signal = (id: string, text: string): WindowEvent.WindowEvent => ({
  _tag: "SignalRaised",
  id,
  signal: { id: `signal-${id}`, text, tokens: 1 }
})

describe("EventLog.layerScratch", () => {
  it.effect("keeps the events as given, in order, and refuses a stale expected version", () =>
    Effect.gen(function* () {
      const log = yield* EventLog.EventLog
      const first = [signal("a", "one"), signal("b", "two")]
      const appended = yield* log.append("s", first, "no_stream")
      assert.strictEqual(appended.nextExpectedVersion, 2)
      const before = yield* read(log, "s")
      yield* log.append("s", [signal("c", "three")], 2)
      const after = yield* read(log, "s")
      assert.deepStrictEqual(
        after.map((envelope) => envelope.version),
        [1, 2, 3]
      )
      // The very objects written, and the envelopes held before are not copied by the append.
      assert.strictEqual(after[0]?.event, first[0])
      assert.strictEqual(after[0], before[0])
      assert.strictEqual(after[1], before[1])
      assert.deepStrictEqual(
        (yield* read(log, "s", { from: 2, to: 2 })).map((envelope) => envelope.eventId),
        ["b"]
      )
      assert.strictEqual(yield* log.version("s"), 3)
      assert.strictEqual(yield* log.version("other"), 0)
      const stale = yield* Effect.either(log.append("s", [signal("d", "four")], 2))
      assert.isTrue(Either.isLeft(stale) && stale.left._tag === "ConcurrencyConflict")
      assert.strictEqual(yield* log.version("s"), 3)
    }).pipe(Effect.provide(EventLog.layerScratch))
  )

  it.effect("under the context service: the same window as over the in-memory store", () =>
    Effect.gen(function* () {
      const steps = Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* ctx.setSystemPrompt("s", "be brief")
        yield* ctx.appendMessages("s", [Message.user("hello"), Message.assistant("hi")])
        yield* ctx.batch("s", Effect.zip(ctx.raiseSignal("s", "note"), ctx.appendMessages("s", [Message.user("more")])))
        yield* ctx.trimToBudget("s", 5)
        const window = yield* ctx.load("s")
        return Window.messages(window).map((message) => [message.role, Message.textOf(message), message.tokens])
      })
      const scratch = yield* steps.pipe(Effect.provide(ContextService.layerMemory({ scratch: true })))
      const memory = yield* steps.pipe(Effect.provide(ContextService.layerMemory()))
      assert.deepStrictEqual(scratch, memory)
      assert.isAbove(memory.length, 0)
    })
  )
})
