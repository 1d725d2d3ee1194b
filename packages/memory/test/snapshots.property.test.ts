import { ContextService, EventLog, Message, Window, type WindowEvent } from "@ctxlog/core"
import { freshStream } from "@ctxlog/testing"
import { assert, describe, layer } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"
import fc from "fast-check"
import { SnapshotRepository, SnapshotStore, SqliteEventLog } from "../src/index.js"
import { postgres, withContext, withContextOnly } from "./support/stores.js"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"

// Property: for any history and any snapshot interval, loading through snapshots (written by `committed`
// whenever the policy said so, restored from plain JSON after a hash check) equals folding the whole
// stream from the first event, and so does catching a held window up from the tail.

type Op =
  | { readonly _tag: "user"; readonly text: string }
  | { readonly _tag: "tools"; readonly calls: number; readonly output: string }
  | { readonly _tag: "trim"; readonly budget: number }
  | { readonly _tag: "turn" }
  | { readonly _tag: "goal"; readonly goal: string }
  | { readonly _tag: "recall"; readonly query: string }
  | { readonly _tag: "facts"; readonly subject: string }
  | { readonly _tag: "clear" }
  | { readonly _tag: "load" }

const word = fc.constantFrom("alpha", "build", "cache", "delta", "error", "fix", "graph", "heap", "index", "json")
const words = fc.array(word, { minLength: 1, maxLength: 8 }).map((list) => list.join(" "))

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: words.map((text) => ({ _tag: "user" as const, text })) },
  {
    weight: 3,
    arbitrary: fc.record({ _tag: fc.constant("tools" as const), calls: fc.integer({ min: 1, max: 3 }), output: words })
  },
  { weight: 1, arbitrary: fc.integer({ min: 10, max: 300 }).map((budget) => ({ _tag: "trim" as const, budget })) },
  { weight: 2, arbitrary: fc.constant({ _tag: "turn" as const }) },
  { weight: 1, arbitrary: words.map((goal) => ({ _tag: "goal" as const, goal })) },
  { weight: 1, arbitrary: words.map((query) => ({ _tag: "recall" as const, query })) },
  { weight: 1, arbitrary: word.map((subject) => ({ _tag: "facts" as const, subject })) },
  { weight: 1, arbitrary: fc.constant({ _tag: "clear" as const }) },
  { weight: 3, arbitrary: fc.constant({ _tag: "load" as const }) }
)

const apply = (
  ctx: ContextService.ContextService.Service,
  load: Effect.Effect<unknown, unknown>,
  stream: string,
  step: Op,
  index: number
) => {
  switch (step._tag) {
    case "user":
      return ctx.appendMessages(stream, [Message.user(step.text)])
    case "tools": {
      const ids = Array.from({ length: step.calls }, (_, call) => `c${index}-${call}`)
      return ctx.appendMessages(stream, [
        Message.assistant(
          "",
          ids.map((id) => Message.toolCall(id, "bash", { command: step.output }))
        ),
        ...ids.map((id) => Message.tool(id, step.output))
      ])
    }
    case "trim":
      return ctx.trimToBudget(stream, step.budget)
    case "turn":
      return ctx.completeTurn(stream)
    case "goal":
      return ctx.setTaskGoal(stream, step.goal)
    case "recall":
      return ctx.injectSemanticRecall(stream, step.query, 120)
    case "facts":
      return ctx.run(stream, () =>
        Either.right<ReadonlyArray<WindowEvent.Draft>>([
          {
            _tag: "FactsRecorded",
            facts: [{ subject: step.subject, predicate: "is", object: "known", sourceMessageId: null }]
          }
        ])
      )
    case "clear":
      return ctx.clearHistory(stream)
    case "load":
      return load
  }
}

const property = (runs: number) =>
  Effect.gen(function* () {
    const runtime = yield* Effect.runtime<
      ContextService.ContextService | EventLog.EventLog | SnapshotStore.SnapshotStore
    >()
    const ctx = yield* ContextService.ContextService
    const log = yield* EventLog.EventLog
    const snapshots = yield* SnapshotStore.SnapshotStore
    yield* Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 30 }), fc.integer({ min: 1, max: 12 }), (ops, every) =>
          Runtime.runPromise(runtime)(
            Effect.gen(function* () {
              yield* Effect.promise(yieldToEventLoop)
              const stream = freshStream("prop")
              const repository = SnapshotRepository.make(log, snapshots, { every })
              // The caller's side of the contract: a window held across steps, caught up from the tail
              // and reported to `committed` after each step (which snapshots it when due).
              let held = yield* repository.loadHeld(stream)
              for (const [index, step] of ops.entries()) {
                yield* apply(ctx, repository.load(stream), stream, step, index)
                held = yield* repository.catchUp(stream, held)
                yield* repository.committed(stream, held.window)
              }
              const loaded = yield* repository.load(stream)
              assert.deepStrictEqual(held.window, loaded)
              const events = yield* Stream.runCollect(log.read(stream)).pipe(Effect.map(Chunk.toReadonlyArray))
              const replayed = Window.replay(events.map((envelope) => envelope.event))
              assert.deepStrictEqual(loaded, replayed)
              // And once more from the snapshot the last load may have written.
              assert.deepStrictEqual(yield* repository.load(stream), replayed)
            })
          )
        ),
        { numRuns: runs }
      )
    )
  })

describe("snapshot + tail equals full replay", () => {
  layer(withContextOnly(SqliteEventLog.layer({ filename: ":memory:", snapshotEvery: 3 })), { timeout: "300 seconds" })(
    "SQLite",
    (it) => {
      it.effect("for random histories and snapshot intervals", () => property(propertyRuns(40, 0.2)), {
        timeout: 300_000
      })
    }
  )
  layer(withContext(postgres("property", { snapshotEvery: 3 })), { timeout: "300 seconds" })("PostgreSQL", (it) => {
    it.effect("for random histories and snapshot intervals", () => property(propertyRuns(10, 0.05)), {
      timeout: 300_000
    })
  })
})
