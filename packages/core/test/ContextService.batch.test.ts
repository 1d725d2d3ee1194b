/**
 * `ContextService.batch`: a unit of work on one stream. Every operation inside decides on the window the
 * ones before it left, and all their events are written in one append (one transaction), or none.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import {
  ContextService,
  EventLog,
  Ids,
  Message,
  RecallSource,
  TokenCounter,
  WindowRepository,
  WorkCounter
} from "../src/index.js"
import { work as counters } from "../src/internal/work.js"

/** The projection's work counters, read as their change since the last `work.reset()`. */
const work = WorkCounter.since(counters)

/** The in-memory log, counting its appends and version reads: a test double of our own service, as a Layer. */
const counted = (appends: { count: number; versions?: number }) =>
  Layer.effect(
    EventLog.EventLog,
    Effect.map(EventLog.EventLog, (log) => ({
      ...log,
      append: (...args: Parameters<typeof log.append>) =>
        Effect.suspend(() => {
          appends.count++
          return log.append(...args)
        }),
      version: (stream: string) =>
        Effect.suspend(() => {
          appends.versions = (appends.versions ?? 0) + 1
          return log.version(stream)
        })
    }))
  ).pipe(Layer.provide(EventLog.layerMemory()))

const stack = (appends: { count: number; versions?: number }) =>
  ContextService.layer().pipe(
    Layer.provideMerge(WindowRepository.layerReplay()),
    Layer.provideMerge(counted(appends)),
    Layer.provideMerge(
      Layer.mergeAll(TokenCounter.layerHeuristic(), Ids.layerSequential("id"), RecallSource.layerEmpty)
    )
  )

const stream = "batch-1"
const eventsOf = Effect.flatMap(EventLog.EventLog, (log) =>
  Effect.map(Stream.runCollect(log.read(stream)), (envelopes) => Chunk.toReadonlyArray(envelopes))
)

describe("ContextService.batch", () => {
  it.effect("writes every operation inside in one append, each deciding on the window the previous left", () => {
    const appends = { count: 0 }
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt(stream, "rules")
      appends.count = 0
      const done = yield* ctx.batch(
        stream,
        Effect.gen(function* () {
          yield* ctx.appendMessages(stream, [Message.user("first")])
          // The unit's window already holds the message: a decision on it sees it.
          const seen = yield* ctx.load(stream)
          assert.strictEqual(seen.history.length, 1)
          yield* ctx.execute(stream, ContextService.Command.RaiseSignal({ text: "hurry" }))
          yield* ctx.run(stream, (window) =>
            Either.right(window.history.length === 1 ? [{ _tag: "TurnCompleted" as const }] : [])
          )
          return "value"
        }),
        { actor: "turn" }
      )
      assert.strictEqual(done.value, "value")
      assert.strictEqual(appends.count, 1)
      assert.deepStrictEqual(
        done.events.map((event) => event._tag),
        ["MessageAppended", "SignalRaised", "TurnCompleted"]
      )
      assert.strictEqual(done.window.version, 4)
      const stored = yield* eventsOf
      assert.deepStrictEqual(
        stored.slice(1).map((envelope) => envelope.metadata.actor),
        ["turn", "turn", "turn"]
      )
      // The cached window after the batch is the replay of the log.
      assert.deepStrictEqual(yield* ctx.load(stream), done.window)
    }).pipe(Effect.provide(stack(appends)))
  })

  it.effect("a failure inside writes nothing", () => {
    const appends = { count: 0 }
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt(stream, "rules")
      const before = (yield* eventsOf).length
      const failed = yield* Effect.either(
        ctx.batch(
          stream,
          Effect.gen(function* () {
            yield* ctx.appendMessages(stream, [Message.user("lost")])
            return yield* Effect.fail("boom" as const)
          })
        )
      )
      assert.isTrue(Either.isLeft(failed))
      assert.strictEqual((yield* eventsOf).length, before)
      assert.strictEqual((yield* ctx.load(stream)).history.length, 0)
    }).pipe(Effect.provide(stack(appends)))
  })

  it.effect("a concurrent writer makes the unit run again on the caught-up window", () => {
    const appends = { count: 0 }
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const log = yield* EventLog.EventLog
      yield* ctx.setSystemPrompt(stream, "rules")
      let runs = 0
      const done = yield* ctx.batch(
        stream,
        Effect.gen(function* () {
          runs++
          if (runs === 1) {
            // Another writer appends behind the unit's back: the unit's append must conflict.
            const version = yield* log.version(stream)
            yield* log.append(
              stream,
              [{ _tag: "SignalRaised", id: "other-1", signal: { id: "sig-other", text: "other", tokens: 2 } }],
              version
            )
          }
          const window = yield* ctx.load(stream)
          yield* ctx.appendMessages(stream, [Message.user(`seen ${window.signals.length} signal(s)`)])
        })
      )
      assert.strictEqual(runs, 2)
      assert.strictEqual(Message.textOf(done.window.history[0] as Message.Message), "seen 1 signal(s)")
      assert.strictEqual(done.window.version, 3)
    }).pipe(Effect.provide(stack(appends)))
  })

  it.effect("a unit with no events writes nothing and a nested unit joins the outer append", () => {
    const appends = { count: 0 }
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt(stream, "rules")
      appends.count = 0
      const empty = yield* ctx.batch(stream, Effect.void)
      assert.strictEqual(empty.events.length, 0)
      assert.strictEqual(appends.count, 0)
      const outer = yield* ctx.batch(
        stream,
        Effect.gen(function* () {
          yield* ctx.appendMessages(stream, [Message.user("a")])
          yield* ctx.batch(stream, ctx.appendMessages(stream, [Message.user("b")]))
        })
      )
      assert.strictEqual(appends.count, 1)
      assert.strictEqual(outer.events.length, 2)
    }).pipe(Effect.provide(stack(appends)))
  })

  it.effect("a unit on a cached window reads no version: one append and no other log call", () => {
    const appends = { count: 0, versions: 0 }
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.setSystemPrompt(stream, "rules")
      appends.count = 0
      appends.versions = 0
      const done = yield* ctx.batch(stream, ctx.appendMessages(stream, [Message.user("a")]))
      assert.deepStrictEqual(appends, { count: 1, versions: 0 })
      assert.strictEqual(done.window.version, 2)
    }).pipe(Effect.provide(stack(appends)))
  })

  it.effect("a unit that writes nothing on a stale cached window runs again on the stored one", () => {
    const appends = { count: 0 }
    return Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const log = yield* EventLog.EventLog
      yield* ctx.setSystemPrompt(stream, "rules")
      // Another writer appends: the cached window (version 1) is now stale.
      yield* log.append(
        stream,
        [{ _tag: "SignalRaised", id: "other-1", signal: { id: "sig-other", text: "other", tokens: 2 } }],
        1
      )
      const seen: Array<number> = []
      const done = yield* ctx.batch(
        stream,
        Effect.map(ctx.load(stream), (window) => {
          seen.push(window.signals.length)
          return window.signals.length
        })
      )
      assert.deepStrictEqual(seen, [0, 1])
      assert.strictEqual(done.value, 1)
      assert.strictEqual(done.window.version, 2)
      assert.strictEqual(done.events.length, 0)
    }).pipe(Effect.provide(stack(appends)))
  })
})

/**
 * The in-memory log with a rival writer: each of the next `rival.left` appends finds one more event
 * appended just before it (a signal, at the stream's version), so it conflicts.
 */
const rivalled = (rival: { left: number; attempts: number }) =>
  Layer.effect(
    EventLog.EventLog,
    Effect.map(EventLog.EventLog, (log) => ({
      ...log,
      append: (...args: Parameters<typeof log.append>) =>
        Effect.gen(function* () {
          rival.attempts++
          if (rival.left > 0) {
            rival.left--
            const [stream] = args
            const version = yield* log.version(stream)
            const id = `rival-${version}`
            yield* log.append(stream, [{ _tag: "SignalRaised", id, signal: { id, text: "rival", tokens: 1 } }], version)
          }
          return yield* log.append(...args)
        })
    }))
  ).pipe(Layer.provide(EventLog.layerMemory()))

describe("ContextService conflicts", () => {
  const withRival = (rival: { left: number; attempts: number }, conflictRetries: number) =>
    ContextService.layer({ conflictRetries, conflictBackoff: "1 millis", conflictBackoffMax: "2 millis" }).pipe(
      Layer.provideMerge(WindowRepository.layerReplay()),
      Layer.provideMerge(rivalled(rival)),
      Layer.provideMerge(
        Layer.mergeAll(TokenCounter.layerHeuristic(), Ids.layerSequential("id"), RecallSource.layerEmpty)
      )
    )

  for (const [retries, conflicts, lands] of [
    [3, 3, true],
    [2, 3, false],
    [0, 1, false],
    [0, 0, true]
  ] as const) {
    it.live(`with ${retries} retries, ${conflicts} conflict(s) in a row ${lands ? "still land" : "fail"}`, () => {
      const rival = { left: 0, attempts: 0 }
      return Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* ctx.setSystemPrompt(stream, "rules")
        rival.left = conflicts
        rival.attempts = 0
        const outcome = yield* Effect.either(ctx.appendMessages(stream, [Message.user("mine")]))
        // The first attempt and one more per retry the schedule allows, never more.
        assert.strictEqual(rival.attempts, Math.min(conflicts, retries) + 1)
        const window = yield* ctx.load(stream)
        if (lands) {
          assert.isTrue(Either.isRight(outcome))
          assert.strictEqual(window.signals.length, conflicts)
          assert.deepStrictEqual(window.history.map(Message.textOf), ["mine"])
        } else {
          assert.strictEqual(Either.isLeft(outcome) ? outcome.left._tag : "landed", "ConcurrencyConflict")
          assert.strictEqual(window.history.length, 0)
        }
      }).pipe(Effect.provide(withRival(rival, retries)))
    })
  }
})

// A unit folds each operation's events as it runs; the append that ends it keeps that window instead of
// folding the same events again (unless the store changed them: a redaction).
describe("ContextService.batch folds once", () => {
  it.effect("the events of a unit are folded once", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages("s", [Message.user("first")])
      work.reset()
      const done = yield* ctx.batch("s", ctx.appendMessages("s", [Message.user("second")]))
      // One message appended to history: one item reference copied, by the one fold.
      assert.strictEqual(work.copied, 1)
      assert.deepStrictEqual(
        done.window.history.map((message) => Message.textOf(message)),
        ["first", "second"]
      )
      assert.deepStrictEqual(yield* ctx.load("s"), done.window)
    }).pipe(Effect.provide(stack({ count: 0 })))
  )
})
