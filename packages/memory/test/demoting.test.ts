// Issue 25 item 3: DemotingPolicyMemory hands its hook every evicted message exactly once, in order,
// across loads and across a restart, on a SQLite file and on PostgreSQL.
import { ConversationMemory, Message, TokenCounter } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import {
  ConversationMemoryPolicy,
  Ctxlog,
  DemotingPolicyMemory,
  RecallIndex,
  SlidingWindowMemory
} from "../src/index.js"
import { freshDatabase } from "./support/postgres.js"
import { tempFile } from "./support/stores.js"

const lastTen = Either.getOrThrowWith(SlidingWindowMemory.lastMessages(10), () => new Error("bad policy"))

/** One process: the durable façade over the store, the inner memory and the demoting memory above it. */
const processOver = (open: () => Layer.Layer<Ctxlog.Services, unknown>, seen: Array<string>, calls: Array<number>) => {
  const hook: DemotingPolicyMemory.DemotionHook = {
    name: "collect",
    demote: (_conversation, messages) =>
      Effect.sync(() => {
        calls.push(messages.length)
        for (const message of messages) seen.push(message.id)
      })
  }
  return DemotingPolicyMemory.layer(lastTen, hook).pipe(
    Layer.provide(ConversationMemoryPolicy.layer(ConversationMemoryPolicy.keepAll)),
    Layer.provideMerge(open())
  )
}

const stores: ReadonlyArray<{
  readonly name: string
  readonly open: Effect.Effect<() => Layer.Layer<Ctxlog.Services, unknown>, unknown>
}> = [
  {
    name: "SQLite file",
    open: Effect.sync(() => {
      const filename = tempFile()
      return () => Ctxlog.sqlite({ filename, tokenCounter: TokenCounter.layerHeuristic(4) })
    })
  },
  {
    name: "PostgreSQL",
    open: Effect.map(
      freshDatabase("demoting"),
      (url) => () => Ctxlog.postgres({ url, tokenCounter: TokenCounter.layerHeuristic(4) })
    )
  }
]

for (const store of stores) {
  describe(`DemotingPolicyMemory on ${store.name}`, () => {
    it.effect(
      "the hook sees every evicted message exactly once, in order, over 1,000 appends with a restart in the middle",
      () =>
        Effect.gen(function* () {
          const open = yield* store.open
          const seen: Array<string> = []
          const calls: Array<number> = []
          const run = (from: number, to: number) =>
            Effect.gen(function* () {
              const memory = yield* ConversationMemory.ConversationMemory
              for (let i = from; i < to; i++) {
                const message =
                  i % 7 === 3
                    ? [
                        Message.assistant("", [Message.toolCall(`call-${i}`, "read", { n: i })]),
                        Message.tool(`call-${i}`, `output ${i}`)
                      ]
                    : [i % 2 === 0 ? Message.user(`message ${i}`) : Message.assistant(`message ${i}`)]
                yield* memory.append("conv", message)
                // Loads come every few appends, so one load can evict several messages.
                if (i % 3 === 0) {
                  const kept = yield* memory.load("conv")
                  assert.isAtMost(kept.length, 11)
                }
              }
            }).pipe(Effect.provide(processOver(open, seen, calls)))
          yield* run(0, 500)
          const beforeRestart = seen.length
          assert.isAbove(beforeRestart, 0)
          // A new process over the same database: the watermark was persisted, nothing is handed twice.
          yield* Effect.gen(function* () {
            const memory = yield* ConversationMemory.ConversationMemory
            const demoting = yield* DemotingPolicyMemory.DemotingPolicyMemory
            const all = yield* demoting.inner.load("conv")
            assert.strictEqual(yield* demoting.watermark("conv"), beforeRestart)
            // A load right after the restart hands over only what was not handed before.
            yield* memory.load("conv")
            assert.deepStrictEqual(
              seen.slice(0, beforeRestart),
              all.slice(0, beforeRestart).map((m) => m.id)
            )
          }).pipe(Effect.provide(processOver(open, seen, calls)))
          yield* run(500, 1000)
          const final = yield* Effect.gen(function* () {
            const memory = yield* ConversationMemory.ConversationMemory
            const demoting = yield* DemotingPolicyMemory.DemotingPolicyMemory
            const kept = yield* memory.load("conv")
            const again = yield* memory.load("conv")
            return {
              all: yield* demoting.inner.load("conv"),
              kept,
              again,
              watermark: yield* demoting.watermark("conv")
            }
          }).pipe(Effect.provide(processOver(open, seen, calls)))
          // Exactly the evicted prefix, each message once, in order; the kept tail was never handed over.
          assert.strictEqual(new Set(seen).size, seen.length)
          assert.strictEqual(final.watermark, seen.length)
          assert.deepStrictEqual(
            seen,
            final.all.slice(0, final.watermark).map((message) => message.id)
          )
          assert.deepStrictEqual(
            final.kept.map((message) => message.id),
            final.all.slice(final.watermark).map((message) => message.id)
          )
          assert.deepStrictEqual(final.again, final.kept)
          assert.isAbove(final.all.length, 1000)
          assert.isTrue(calls.every((count) => count > 0))
          assert.isAbove(calls.length, 100)
        }),
      60_000
    )

    it.effect("the recall hook indexes evicted messages as the owner's documents; clear resets the watermark", () =>
      Effect.gen(function* () {
        const open = yield* store.open
        yield* Effect.gen(function* () {
          const memory = yield* ConversationMemory.ConversationMemory
          const demoting = yield* DemotingPolicyMemory.DemotingPolicyMemory
          const index = yield* RecallIndex.RecallIndex
          for (let i = 0; i < 14; i++) yield* memory.append("rc", [Message.user(`note ${i} about zebra${i}`)])
          const kept = yield* memory.load("rc")
          assert.strictEqual(kept.length, 10)
          const hits = yield* index.search({ scope: RecallIndex.documentsOf("alice"), query: "zebra2" })
          assert.deepStrictEqual(
            hits.map((hit) => hit.text.includes("note 2 about zebra2")),
            [true]
          )
          // Kept messages are not documents yet.
          assert.deepStrictEqual(yield* index.search({ scope: RecallIndex.documentsOf("alice"), query: "zebra12" }), [])
          yield* memory.clear("rc")
          assert.strictEqual(yield* demoting.watermark("rc"), 0)
        }).pipe(
          Effect.provide(
            DemotingPolicyMemory.layerRecall(lastTen, "alice").pipe(
              Layer.provide(ConversationMemoryPolicy.layer(ConversationMemoryPolicy.keepAll)),
              Layer.provideMerge(open())
            )
          )
        )
      })
    )
  })
}

// The service is usable without a durable store too (the watermark lives in the in-memory log).
describe("DemotingPolicyMemory.make", () => {
  it.effect("a failing hook leaves the watermark, so the next load retries the same messages", () =>
    Effect.gen(function* () {
      const inner = yield* ConversationMemory.ConversationMemory
      let fail = true
      const handed: Array<ReadonlyArray<string>> = []
      const memory = yield* DemotingPolicyMemory.make(inner, lastTen, {
        name: "flaky",
        demote: (_conversation, messages) =>
          Effect.suspend(() => {
            handed.push(messages.map((message) => Message.textOf(message)))
            return fail
              ? Effect.fail(new DemotingPolicyMemory.DemotionError({ hook: "flaky", detail: "scripted" }))
              : Effect.void
          })
      })
      for (let i = 0; i < 12; i++) yield* memory.append("f", [Message.user(`m${i}`)])
      const failed = yield* Effect.either(memory.load("f"))
      assert.isTrue(Either.isLeft(failed))
      assert.strictEqual(yield* memory.watermark("f"), 0)
      fail = false
      yield* memory.load("f")
      assert.deepStrictEqual(handed, [
        ["m0", "m1"],
        ["m0", "m1"]
      ])
      assert.strictEqual(yield* memory.watermark("f"), 2)
    }).pipe(
      Effect.provide(
        ConversationMemoryPolicy.layer(ConversationMemoryPolicy.keepAll).pipe(
          Layer.provideMerge(Ctxlog.memory({ tokenCounter: TokenCounter.layerHeuristic(4) }))
        )
      )
    )
  )
})
