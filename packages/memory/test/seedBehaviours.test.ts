// Issue 20, seed behaviour 8: prepareContext's KindDelta on a window that holds a message of a managed kind
// in history; and part B for memory policies: a policy's load keeps the tool result the model has not
// seen, with its call. On a SQLite file and on a fresh PostgreSQL database.
import { ContextService, EventLog, Ids, Message, RecallSource, TokenCounter, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as ContextAssembly from "../src/ContextAssembly.js"
import * as ConversationMemoryPolicy from "../src/ConversationMemoryPolicy.js"
import { SlidingWindowMemory, SqliteEventLog, TokenWindowMemory } from "../src/index.js"
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
  ContextService.layer().pipe(
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

for (const store of stores) {
  describe(`part B on ${store.name}: memory policies keep the tool result the model has not seen`, () => {
    it.effect("a turn stopped on a tool result, then a user interjection: every policy's load keeps the pair", () =>
      Effect.gen(function* () {
        const context = yield* ContextService.ContextService
        const output = `contents of a.ts ${"x".repeat(4_000)}`
        yield* context.appendMessages("pb", [
          Message.user("hello"),
          Message.assistant("hi"),
          Message.user("read a.ts"),
          Message.assistant("", [Message.toolCall("x", "read_file", { path: "a.ts" })]),
          Message.tool("x", output),
          Message.user("also, hurry")
        ])
        const policies = [
          Either.getOrThrow(SlidingWindowMemory.lastMessages(1)),
          Either.getOrThrow(TokenWindowMemory.budget(20))
        ]
        for (const policy of policies) {
          const memory = yield* ConversationMemoryPolicy.make(policy)
          const loaded = yield* memory.load("pb")
          assert.deepStrictEqual(
            loaded.flatMap(Message.toolResultsOf).map((part) => [part.toolCallId, part.content]),
            [["x", output]],
            policy.name
          )
          assert.isTrue(loaded.some((message) => Message.toolCallsOf(message).some((call) => call.id === "x")))
          const last = loaded.at(-1)
          assert.strictEqual(last === undefined ? "" : Message.textOf(last), "also, hurry")
        }
      }).pipe(Effect.provide(appOn(store)))
    )
  })
}
