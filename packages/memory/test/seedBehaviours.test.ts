// Issue 20, seed behaviour 8: prepareContext's KindDelta on a window that holds a message of a managed kind
// in history. On a SQLite file and on a fresh PostgreSQL database, checked against a replay of the store.
import { ContextService, EventLog, Ids, Message, RecallSource, TokenCounter, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ContextAssembly from "../src/ContextAssembly.js"
import { SqliteEventLog } from "../src/index.js"
import { layer as postgresLog } from "./support/postgres.js"
import { tempFile } from "./support/stores.js"

const stores = [
  { name: "SQLite", log: () => SqliteEventLog.layer({ filename: tempFile() }) },
  { name: "PostgreSQL", log: () => postgresLog("seeds20") }
] as const

const recallOnly = Layer.succeed(RecallSource.RecallSource, {
  recall: (request) =>
    Effect.succeed(
      request.kind === "recall" ? [{ message: Message.user("recalled: keys rotate monthly"), score: 1 }] : []
    )
})

const appOn = (store: (typeof stores)[number]) =>
  ContextService.layer.pipe(
    Layer.provideMerge(store.log()),
    Layer.provideMerge(Layer.mergeAll(TokenCounter.layerGpt(), Ids.layerUuidV7, recallOnly))
  )

const eventsOf = (stream: string) =>
  Effect.flatMap(EventLog.EventLog, (log) =>
    Effect.map(Stream.runCollect(log.read(stream)), (all) => Chunk.toReadonlyArray(all).map((each) => each.event))
  )

for (const store of stores) {
  describe(`behaviour 8 on ${store.name}: prepareContext reports what it did to knowledge, and only that`, () => {
    it.effect(
      "a recall message in history is neither listed as removed nor makes the same recall rewrite each turn",
      () =>
        Effect.gen(function* () {
          const context = yield* ContextService.ContextService
          // A recall note that an earlier release (or the caller) left in history.
          yield* context.appendMessages("b8", [
            Message.user("rotate the keys"),
            { role: "system", kind: "recall", parts: [Message.text("recalled: an old note")] },
            Message.assistant("On it.")
          ])
          const inHistory = (yield* context.load("b8")).history.filter((message) => message.kind === "recall")
          assert.strictEqual(inHistory.length, 1)
          const policy: ContextAssembly.RetrievalPolicy = { budgets: { recall: 200, graphFacts: 0 } }
          const first = yield* ContextAssembly.prepareContext("b8", "keys", policy)
          assert.isFalse(first.recall.unchanged)
          assert.deepStrictEqual(first.recall.removed, [])
          assert.deepStrictEqual(first.recall.injected.map(Message.textOf), ["recalled: keys rotate monthly"])
          // The history note is still there: the injection did not remove it, so it is not reported removed.
          assert.deepStrictEqual(
            first.window.history.filter((message) => message.kind === "recall").map((message) => message.id),
            inHistory.map((message) => message.id)
          )
          const version = first.window.version
          const second = yield* ContextAssembly.prepareContext("b8", "keys", policy)
          assert.isTrue(second.recall.unchanged)
          assert.deepStrictEqual(second.recall.removed, [])
          assert.strictEqual(second.window.version, version)
          assert.strictEqual(second.tokens, 0)
          const replayed = Window.replay(yield* eventsOf("b8"))
          assert.deepStrictEqual(Window.messages(replayed), Window.messages(second.window))
        }).pipe(Effect.provide(appOn(store)))
    )
  })
}
