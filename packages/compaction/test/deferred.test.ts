import { ContextService, EventLog, Message, ToolPairs } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { DeferredSummaries } from "../src/index.js"
import { CompactorProbe, filler } from "./harness.js"
import { stores, storeLayer } from "./support/stores.js"

const options: DeferredSummaries.Options = { cutoffTokens: 200 }

const seed = (stream: string) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    return yield* ctx.appendMessages(stream, [
      Message.user("inspect the repo"),
      Message.assistant("Reading both files.", [
        Message.toolCall("big1", "cat", { path: "src/a.ts" }),
        Message.toolCall("small", "ls", { path: "." })
      ]),
      Message.tool("big1", `export const a = 1\n${filler(2000)}`),
      Message.tool("small", "a.ts b.ts"),
      Message.assistant("", [Message.toolCall("big2", "cat", { path: "src/b.ts" })]),
      Message.tool("big2", `export const b = 2\n${filler(3000)}`),
      // The model answered: every output above has been seen.
      Message.assistant("Read both.")
    ])
  })

const outputOf = (history: ReadonlyArray<Message.Message>, toolCallId: string) =>
  history.flatMap((message) => Message.toolResultsOf(message)).find((part) => part.toolCallId === toolCallId)?.content

for (const store of stores) {
  describe(`deferred tool-pair summaries on ${store.name} (issue 11 item 6)`, () => {
    it.effect(
      "maybeSummarizeToolPair queues the pairs over the cutoff and records a summary for each, changing nothing yet",
      () =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const before = (yield* seed("d")).window
          const result = yield* DeferredSummaries.maybeSummarizeToolPair("d", options)
          assert.deepStrictEqual(result.queued, ["big1", "big2"])
          assert.deepStrictEqual(result.deferred, ["big1", "big2"])
          const window = yield* ctx.load("d")
          assert.deepStrictEqual(window.history, before.history)
          assert.deepStrictEqual(window.pendingToolPairs, [])
          assert.deepStrictEqual(
            window.deferredSummaries.map((summary) => summary.toolCallId),
            ["big1", "big2"]
          )
          assert.include(window.deferredSummaries[0]?.summary ?? "", "[summary of cat output")
          // Nothing new over the cutoff: nothing to do, and the compactor is not called again.
          const again = yield* DeferredSummaries.maybeSummarizeToolPair("d", options)
          assert.deepStrictEqual(again, { queued: [], deferred: [] })
          assert.strictEqual(yield* Ref.get((yield* CompactorProbe).calls), 2)
        }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("a compactor failure leaves the rest of the backlog queued; the next call drains it", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const probe = yield* CompactorProbe
        yield* seed("df")
        yield* Ref.set(probe.failNext, 1)
        const failed = yield* Effect.either(DeferredSummaries.maybeSummarizeToolPair("df", options))
        assert.strictEqual(failed._tag, "Left")
        assert.deepStrictEqual((yield* ctx.load("df")).pendingToolPairs, ["big1", "big2"])
        const drained = yield* DeferredSummaries.maybeSummarizeToolPair("df", options)
        assert.deepStrictEqual(drained, { queued: [], deferred: ["big1", "big2"] })
        assert.deepStrictEqual((yield* ctx.load("df")).pendingToolPairs, [])
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("applyDeferredSummaries applies all in reverse order and returns the count", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const before = (yield* seed("a")).window
        yield* DeferredSummaries.maybeSummarizeToolPair("a", options)
        const applied = yield* DeferredSummaries.applyDeferredSummaries("a")
        assert.strictEqual(applied, 2)
        const window = yield* ctx.load("a")
        assert.include(outputOf(window.history, "big1") ?? "", "[summary of cat output")
        assert.include(outputOf(window.history, "big2") ?? "", "[summary of cat output")
        assert.strictEqual(outputOf(window.history, "small"), "a.ts b.ts")
        assert.isBelow(window.tokens.total, before.tokens.total)
        assert.deepStrictEqual(window.deferredSummaries, [])
        assert.deepStrictEqual(ToolPairs.problems(window.history, window.completedToolIds), [])
        assert.strictEqual(yield* DeferredSummaries.applyDeferredSummaries("a"), 0)
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("the applied event lists the newest summary first", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* seed("r")
        yield* DeferredSummaries.maybeSummarizeToolPair("r", options)
        const window = yield* ctx.load("r")
        assert.deepStrictEqual(DeferredSummaries.decideApply(window), [
          { _tag: "DeferredSummariesApplied", toolCallIds: ["big2", "big1"] }
        ])
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("maybeApplyDeferredSummaries: only above the soft threshold or at the count cutoff", () =>
      Effect.gen(function* () {
        const window = (yield* seed("m")).window
        yield* DeferredSummaries.maybeSummarizeToolPair("m", options)
        const roomy = { budget: window.tokens.total * 10, softThreshold: 0.7, countCutoff: 3 }
        assert.strictEqual(yield* DeferredSummaries.maybeApplyDeferredSummaries("m", roomy), 0)
        assert.strictEqual(yield* DeferredSummaries.maybeApplyDeferredSummaries("m", { ...roomy, countCutoff: 2 }), 2)
        yield* seed("m2")
        yield* DeferredSummaries.maybeSummarizeToolPair("m2", options)
        const tight = { budget: window.tokens.total, softThreshold: 0.7, countCutoff: 99 }
        assert.strictEqual(yield* DeferredSummaries.maybeApplyDeferredSummaries("m2", tight), 2)
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect(
      "flushDeferredSummaries applies the recorded summaries as an event, drops what has none, and empties both queues",
      () =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const log = yield* EventLog.EventLog
          const before = (yield* seed("fl")).window
          // big2 gets a summary recorded; big1 is queued by hand and has none.
          yield* DeferredSummaries.maybeSummarizeToolPair("fl", { cutoffTokens: 600 })
          yield* ctx.run("fl", () => Either.right([{ _tag: "ToolPairsQueued", toolCallIds: ["big1"] } as const]))
          const both = yield* ctx.load("fl")
          assert.deepStrictEqual(both.pendingToolPairs, ["big1"])
          assert.deepStrictEqual(
            both.deferredSummaries.map((summary) => summary.toolCallId),
            ["big2"]
          )
          const summary = both.deferredSummaries[0]?.summary ?? ""
          const flushed = yield* DeferredSummaries.flushDeferredSummaries("fl")
          assert.deepStrictEqual(flushed, { pending: 1, deferred: 1, applied: 1 })
          const window = yield* ctx.load("fl")
          assert.deepStrictEqual([window.pendingToolPairs, window.deferredSummaries], [[], []])
          // big2's output is its summary now; big1 is untouched; the window's tokens shrank by the saving.
          assert.strictEqual(outputOf(window.history, "big2"), summary)
          assert.strictEqual(outputOf(window.history, "big1"), outputOf(before.history, "big1"))
          assert.isBelow(window.tokens.history, before.tokens.history)
          // The original output stays in the log.
          const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("fl")))
          const types = events.map((envelope) => envelope.type)
          assert.include(types, "DeferredSummariesApplied")
          assert.include(types, "DeferredSummariesFlushed")
          const original = events.some(
            (envelope) => envelope.type === "MessageAppended" && envelope.data.includes("export const b = 2")
          )
          assert.isTrue(original)
          // Nothing waiting: a second flush writes nothing.
          assert.deepStrictEqual(yield* DeferredSummaries.flushDeferredSummaries("fl"), {
            pending: 0,
            deferred: 0,
            applied: 0
          })
          assert.strictEqual((yield* ctx.load("fl")).version, window.version)
        }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("flushDeferredSummaries never applies the summary of an output the model has not seen yet", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* ctx.appendMessages("fu", [
          Message.user("read it"),
          Message.assistant("", [Message.toolCall("fresh", "cat", { path: "big.txt" })]),
          Message.tool("fresh", filler(4000))
        ])
        yield* DeferredSummaries.maybeSummarizeToolPair("fu", options)
        assert.strictEqual((yield* ctx.load("fu")).deferredSummaries.length, 1)
        const flushed = yield* DeferredSummaries.flushDeferredSummaries("fu")
        assert.deepStrictEqual(flushed, { pending: 0, deferred: 1, applied: 0 })
        const window = yield* ctx.load("fu")
        assert.strictEqual(outputOf(window.history, "fresh"), filler(4000))
        assert.deepStrictEqual([window.pendingToolPairs, window.deferredSummaries], [[], []])
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })
}

// A complete with tool results asks for candidates on every call: a history with no result over the
// cutoff costs a look at each message's token count, not a walk of its parts to pair calls and results.
describe("deferred candidates work", () => {
  it.effect("reads the parts of only the messages over the cutoff", () =>
    Effect.gen(function* () {
      const window = (yield* seed("work")).window
      const big = window.history.filter((message) => message.tokens > 200)
      assert.isAbove(big.length, 0)
      let partsRead = 0
      const counted = (history: ReadonlyArray<Message.Message>) =>
        history.map((message) => {
          const { parts, ...rest } = message
          return Object.defineProperty({ ...rest }, "parts", {
            enumerable: true,
            get: () => {
              partsRead++
              return parts
            }
          }) as Message.Message
        })
      // Nothing over a cutoff above every message: no part is read.
      const none = DeferredSummaries.candidates({ ...window, history: counted(window.history) }, { cutoffTokens: 1e9 })
      assert.deepStrictEqual(none, [])
      assert.strictEqual(partsRead, 0)
      // Over the cutoff: the same candidates as before, found by pairing the history.
      assert.deepStrictEqual(DeferredSummaries.candidates(window, options), ["big1", "big2"])
    }).pipe(Effect.provide(ContextService.layerMemory()))
  )
})
