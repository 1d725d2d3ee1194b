/**
 * `appendMessages` of one message by counting work, not time (issue 24: one message costs ≤ 1.2x one
 * append). What it does beyond the `EventLog.append` under it is counted in effects the fiber evaluates
 * (a supervisor sees each one), in token counts and in ids: the decision, the fold and the window cache
 * must stay a small constant on top of the append, the same at 1k and at 10k messages. With the
 * in-memory log the append evaluates 86 effects; `appendMessages` added 39 on top of it when `run` was a
 * generator, prepare an effect per message and the unit lookup a `FiberRef.get` and a map; now 30.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as RuntimeFlagsPatch from "effect/RuntimeFlagsPatch"
import * as Supervisor from "effect/Supervisor"
import { ContextService, EventLog, Ids, Message, TokenCounter, type WindowEvent } from "../src/index.js"

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
    // A supervisor sees the fibers forked under it: the effect runs in one child fiber, joined.
    // (with op supervision on, so that the supervisor sees each effect the child evaluates).
    const child = Effect.flatMap(Effect.fork(effect), Fiber.join)
    return Effect.map(
      Effect.withRuntimeFlagsPatch(
        Effect.supervised(child, counter),
        RuntimeFlagsPatch.enable(RuntimeFlags.OpSupervision)
      ),
      () => counter.count
    )
  })

describe("appendMessages work", () => {
  it.effect(
    "one message: one token count, two ids, and a constant number of effects over one append, at 1k and 10k",
    () => {
      let counted = 0
      let drawn = 0
      const counting = Layer.succeed(
        TokenCounter.TokenCounter,
        TokenCounter.make("counting", (text) => {
          counted++
          return TokenCounter.estimate(text)
        })
      )
      const ids = Layer.effect(
        Ids.Ids,
        Effect.map(Ids.makeSequential("w"), (inner) => ({
          next: Effect.tap(inner.next, () => Effect.sync(() => drawn++))
        }))
      )
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
            counted = 0
            drawn = 0
            const effects = yield* effectsOf(ctx.appendMessages("s", [Message.user("the measured message")]))
            const append = yield* oneAppend
            return { effects, append, counted, drawn }
          })
        yield* oneAppend // warm: the first append of a stream takes its own path
        const at1k = yield* measure(1000)
        const at10k = yield* measure(10_000)
        console.log("appendMessages of one message at 1k:", JSON.stringify(at1k), "at 10k:", JSON.stringify(at10k))
        for (const at of [at1k, at10k]) {
          assert.strictEqual(at.counted, 1, "the message's text is counted once")
          assert.strictEqual(at.drawn, 2, "one id for the message, one for its event")
          // What the service adds on top of the append: validation, count, ids, decision, fold, cache.
          assert.isAtMost(at.effects - at.append, 30)
        }
        assert.strictEqual(at10k.effects, at1k.effects, "nothing on the path grows with the window")
      }).pipe(Effect.provide(ContextService.layerMemory({ tokenCounter: counting, ids })))
    }
  )
})
