/**
 * `appendMessages` of one message by counting its work (issue 42: ≤ 1.3x one append; ADR 0166), with the
 * built-in id services (drawn in plain code): each part of what it adds to the append under it is
 * counted, so none can come back unnoticed — the effects the fiber evaluates beyond the append's, the
 * validation walks (the commonest input passes the one check without the generic walk, and the log's
 * encoder knows the event), the token counts, the folds and the windows made, the Schema encodes. The
 * same at 1k and 10k messages. An input of a shape the fast check does not know is still walked, and a
 * bad one is still refused with its path before anything is written.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as RuntimeFlagsPatch from "effect/RuntimeFlagsPatch"
import * as Supervisor from "effect/Supervisor"
import { work as metrics } from "../src/internal/work.js"
import { ContextService, EventLog, Ids, Message, TokenCounter, type WindowEvent, WorkCounter } from "../src/index.js"

/** The core's work counters, read as their change since the last `reset()` (ADR 0160). */
const work = WorkCounter.since(metrics)

/** Counts every effect the supervised fibers evaluate. */
class EffectCount extends Supervisor.AbstractSupervisor<number> {
  count = 0
  get value() {
    return Effect.sync(() => this.count)
  }
  override onEffect(): void {
    this.count++
  }
}

const effectsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const counter = new EffectCount()
    const child = Effect.flatMap(Effect.fork(effect), Fiber.join)
    return Effect.map(
      Effect.withRuntimeFlagsPatch(
        Effect.supervised(child, counter),
        RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)
      ),
      () => counter.count
    )
  })

const stack = (ids: Layer.Layer<Ids.Ids>) => {
  const counted = { texts: 0 }
  const counter = Layer.succeed(
    TokenCounter.TokenCounter,
    TokenCounter.make("counting", (text) => {
      counted.texts++
      return TokenCounter.estimate(text)
    })
  )
  return { counted, layer: ContextService.layerMemory({ tokenCounter: counter, ids }) }
}

describe("appendMessages of one message: its work beside one append", () => {
  for (const [label, ids] of [
    ["UUIDv7 ids", Ids.layerUuidV7],
    ["sequential ids", Ids.layerSequential("w")]
  ] as const) {
    it.effect(`${label}: one count, one fold, one window, no walk, no Schema encode, 10 effects, at 1k and 10k`, () => {
      const { counted, layer } = stack(ids)
      return Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const log = yield* EventLog.EventLog
        const grow = (stream: string, to: number) =>
          Effect.gen(function* () {
            const at = (yield* ctx.load(stream)).version
            const batch = Array.from({ length: to - at }, (_, k) => Message.user(`filler ${at + k}`))
            if (batch.length > 0) yield* ctx.appendMessages(stream, batch)
          })
        let single = 0
        const oneAppend = Effect.suspend(() => {
          single++
          const event: WindowEvent.WindowEvent = {
            _tag: "MessageAppended",
            id: `single-${single}`,
            message: { id: `single-m-${single}`, role: "user", kind: "chat", parts: [Message.text("one")], tokens: 5 }
          }
          return effectsOf(log.append("single", [event], single - 1))
        })
        const measure = (size: number) =>
          Effect.gen(function* () {
            yield* grow("s", size)
            counted.texts = 0
            work.reset()
            const effects = yield* effectsOf(ctx.appendMessages("s", [Message.user("the measured message")]))
            const done = { ...work, texts: counted.texts }
            const append = yield* oneAppend
            return { ...done, effects, append }
          })
        yield* oneAppend // warm: the first append of a stream takes its own path
        const at1k = yield* measure(1000)
        const at10k = yield* measure(10_000)
        console.log(`${label}: appendMessages of one at 1k:`, JSON.stringify(at1k), "at 10k:", JSON.stringify(at10k))
        for (const at of [at1k, at10k]) {
          assert.strictEqual(at.texts, 1, "the message's text is counted once")
          assert.strictEqual(at.valueWalks, 0, "validated without the generic walk, before counting and in the log")
          assert.strictEqual(at.schemaEncodes, 0, "the event is encoded by the log's fast path")
          assert.strictEqual(at.eventsFolded, 1, "the appended event is folded once, into the cached window")
          assert.strictEqual(at.views, 1, "one window made, for the fold")
          assert.strictEqual(at.copied, 1, "the message is the one reference added to history")
          assert.strictEqual(at.materialized, 0, "no history array is built")
          // What the service adds on top of the append: the span switch, validation, count and ids, the
          // unit's lookup, the attempt and its retry guard, the fold and the repository's note. Was 30
          // (ids drawn as effects, three effects for the span switch, two for the unit lookup, ADR 0166).
          assert.isAtMost(at.effects - at.append, 10)
        }
        assert.deepStrictEqual(at10k, at1k, "nothing on the path grows with the window")
      }).pipe(Effect.provide(layer))
    })
  }

  it.effect("an input of another shape is walked; a bad one is refused with its path and writes nothing", () => {
    const { layer } = stack(Ids.layerUuidV7)
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const log = yield* EventLog.EventLog
      work.reset()
      yield* ctx.appendMessages("s", [{ ...Message.user("with options"), providerOptions: { openai: { a: 1 } } }])
      // providerOptions are not a shape the fast paths know: walked by the input check and by the log's.
      assert.strictEqual(work.valueWalks, 2)
      const bad = { role: "user", parts: [{ type: "tool_call", id: "c", name: "n", input: { n: 10n } }] }
      const refused = yield* Effect.flip(ctx.appendMessages("s", [bad as unknown as Message.MessageInput]))
      assert.strictEqual(refused._tag, "EventEncodeError")
      assert.include(refused.message, "messages.0.parts.0.input.n")
      assert.strictEqual(yield* log.version("s"), 1, "nothing written")
    }).pipe(Effect.provide(layer))
  })
})
