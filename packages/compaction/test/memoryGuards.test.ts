// `CompactingMemory` summaries pass the same guards as every summarizing path (issue 39, build item 2): it
// used to commit whatever its compactor answered. A refused summary is recorded (`CompactionFailed`, tier
// `memory`, `guard:<reason>`), nothing else is written, and the load serves the history uncompacted; an
// accepted one is written with a receipt naming what it replaced (those messages live in the inner memory).
import { Compactor, ContextService, ConversationMemory, EventLog, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { CompactingMemory, SummaryGuard } from "../src/index.js"
import { coreLayer, filler } from "./harness.js"

/** The inner memory: a conversation is the history of the stream of the same name. */
const innerMemory: Layer.Layer<ConversationMemory.ConversationMemory, never, ContextService.ContextService> =
  Layer.effect(
    ConversationMemory.ConversationMemory,
    Effect.map(ContextService.ContextService, (ctx) => {
      const fail = (conversationId: string, operation: string) => (error: { readonly message: string }) =>
        new ConversationMemory.MemoryError({ conversationId, operation, detail: error.message })
      return {
        load: (id) =>
          ctx.load(id).pipe(
            Effect.map((window) => window.history),
            Effect.mapError(fail(id, "load"))
          ),
        append: (id, messages) =>
          ctx.appendMessages(id, messages).pipe(
            Effect.map((outcome) =>
              outcome.events.flatMap((event) => (event._tag === "MessageAppended" ? [event.message] : []))
            ),
            Effect.mapError(fail(id, "append"))
          ),
        clear: (id) => ctx.clearHistory(id).pipe(Effect.asVoid, Effect.mapError(fail(id, "clear")))
      }
    })
  )

const answering = (summary: string) =>
  Layer.succeed(Compactor.Compactor, { name: "fixed", compact: () => Effect.succeed({ summary }) })

const memoryAnswering = (summary: string, guard?: CompactingMemory.Options["guard"]) =>
  CompactingMemory.layer({ triggerTokens: 1000, keepTokens: 400, maxSummaryTokens: 200 }, { guard }).pipe(
    Layer.provide(innerMemory),
    Layer.provideMerge(Layer.merge(coreLayer, answering(summary)))
  )

const exchange = (i: number): ReadonlyArray<Message.MessageInput> => [
  Message.user(`question ${i} about src/file${i}.ts ${filler(1200)}`),
  Message.assistant(`answer ${i}`)
]

const compactionEvents = (conversation: string) =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    return Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(`${conversation}/compaction`))).map(
      (envelope) => envelope.event
    )
  })

const fill = (conversation: string) =>
  Effect.gen(function* () {
    const memory = yield* ConversationMemory.ConversationMemory
    for (let i = 1; i <= 6; i++) yield* memory.append(conversation, exchange(i))
    return memory
  })

describe("CompactingMemory guards (issue 39)", () => {
  it.effect("an empty summary is refused and recorded; the load serves every message", () =>
    Effect.gen(function* () {
      const memory = yield* fill("m1")
      const loaded = yield* memory.load("m1")
      assert.strictEqual(loaded.length, 12)
      assert.isFalse(loaded.some((message) => message.kind === "summary"))
      const events = yield* compactionEvents("m1")
      assert.deepStrictEqual(
        events.map((event) => event._tag),
        ["CompactionFailed"]
      )
      const [failed] = events
      if (failed?._tag === "CompactionFailed") {
        assert.strictEqual(failed.tier, "memory")
        assert.match(failed.reason, /^guard:empty: /)
      }
    }).pipe(Effect.provide(memoryAnswering("")))
  )

  it.effect("a summary dropping a pinned path is refused (the memory's own guard settings)", () =>
    Effect.gen(function* () {
      const memory = yield* fill("m2")
      assert.strictEqual((yield* memory.load("m2")).length, 12)
      const [failed] = yield* compactionEvents("m2")
      assert.strictEqual(
        failed?._tag === "CompactionFailed" ? failed.reason : "",
        "guard:pinned: it drops pinned identifier(s) src/file1.ts"
      )
    }).pipe(Effect.provide(memoryAnswering("Questions were answered.", { pinnedIdentifiers: ["src/file1.ts"] })))
  )

  it.effect("a guard a policy adds through SummaryGuard.layer refuses here too", () =>
    Effect.gen(function* () {
      const memory = yield* fill("m3")
      assert.strictEqual((yield* memory.load("m3")).length, 12)
      const [failed] = yield* compactionEvents("m3")
      assert.strictEqual(
        failed?._tag === "CompactionFailed" ? failed.reason : "",
        "guard:pinned: it drops pinned identifier(s) src/file2.ts"
      )
    }).pipe(
      Effect.provide(memoryAnswering("Questions were answered.")),
      Effect.provide(SummaryGuard.layer({ pinnedIdentifiers: ["src/file2.ts"] }))
    )
  )

  it.effect("an accepted summary is written with a receipt of the inner memory's messages it replaced", () =>
    Effect.gen(function* () {
      const memory = yield* fill("m4")
      const all = yield* memory.load("m4")
      const summary = all[0]
      assert.strictEqual(summary?.kind, "summary")
      const events = yield* compactionEvents("m4")
      const compacted = events.at(-1)
      if (compacted?._tag !== "Compacted") return assert.fail("no Compacted")
      const inner = yield* ContextService.ContextService.pipe(Effect.flatMap((ctx) => ctx.load("m4")))
      const replaced = inner.history.filter((message) => compacted.removedIds.includes(message.id))
      assert.strictEqual(replaced.length, compacted.removedIds.length)
      assert.strictEqual(
        compacted.receipt?.replacedTokens,
        replaced.reduce((sum, message) => sum + message.tokens, 0)
      )
      assert.deepStrictEqual(compacted.receipt?.sources, [
        ...new Set(replaced.map((message) => message.origin?.eventId ?? "?"))
      ])
      assert.match(compacted.receipt?.reason ?? "", /^policy tokens\(trigger 1000, keep 400\)/)
    }).pipe(Effect.provide(memoryAnswering("Six questions about src/file1.ts to src/file6.ts, answered.")))
  )

  // ADR 0148: the loads that kept every message are folded into one CompactionDecided (step `load`, tier
  // `memory`), written with the memory's next event in the same append: declining loads write nothing.
  it.effect("loads that decided not to compact are folded into the next write, one event, no write of their own", () =>
    Effect.gen(function* () {
      const memory = yield* ConversationMemory.ConversationMemory
      const log = yield* EventLog.EventLog
      yield* memory.append("m5", exchange(1))
      yield* memory.load("m5")
      yield* memory.append("m5", exchange(2))
      yield* memory.load("m5")
      // Two loads under the trigger: nothing written for them.
      assert.strictEqual(yield* log.version("m5/compaction"), 0)
      for (let i = 3; i <= 6; i++) yield* memory.append("m5", exchange(i))
      yield* memory.load("m5")
      const events = yield* compactionEvents("m5")
      assert.deepStrictEqual(
        events.map((event) => event._tag),
        ["CompactionDecided", "Compacted"]
      )
      const [decided] = events
      if (decided?._tag !== "CompactionDecided") return assert.fail("no CompactionDecided")
      assert.strictEqual(decided.step, "load")
      const [decision] = decided.decisions
      assert.strictEqual(decision?.tier, "memory")
      assert.strictEqual(decision?.reason, "below-threshold")
      assert.strictEqual(decision?.thresholdTokens, 1000)
      assert.isBelow(decision?.usedTokens ?? Infinity, 1000)
      assert.match(decision?.detail ?? "", /2 load\(s\) kept every message/)
    }).pipe(Effect.provide(memoryAnswering("Six questions about src/file1.ts to src/file6.ts, answered.")))
  )
})
