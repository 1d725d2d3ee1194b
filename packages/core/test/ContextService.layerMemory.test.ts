// The one in-memory stack (`ContextService.layerMemory(options)`) and the one constructor and layer per
// service: every port is exposed, each option replaces what backs its port, and the deprecated names
// are the new functions themselves.
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import {
  ContextService,
  EventHash,
  EventLog,
  Ids,
  Message,
  RecallSource,
  TokenCounter,
  WindowRepository
} from "../src/index.js"

const storedChain = (stream: string) =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    return Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream)))
  })

describe("ContextService.layerMemory", () => {
  it.effect("defaults: o200k_base counter, UUIDv7 ids, no recall, an unkeyed chain, every port exposed", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const counter = yield* TokenCounter.TokenCounter
      yield* WindowRepository.WindowRepository
      yield* RecallSource.RecallSource
      const { window } = yield* ctx.appendMessages("s", [Message.user("hello world")])
      assert.strictEqual(counter.name, "o200k_base")
      assert.strictEqual(window.tokens.history, counter.countMessage(Message.user("hello world")))
      const id = yield* (yield* Ids.Ids).next
      assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/)
      const envelopes = yield* storedChain("s")
      assert.isTrue(EventHash.verify(envelopes.map((envelope) => ({ ...envelope, stream: "s" }))).ok)
    }).pipe(Effect.provide(ContextService.layerMemory()))
  )

  it.effect("options replace the counter, the ids, the recall source and key the chain", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const { window } = yield* ctx.appendMessages("s", [Message.user("abcdefgh")])
      assert.strictEqual((yield* TokenCounter.TokenCounter).name, "heuristic(4)")
      assert.strictEqual(window.tokens.history, 2 + TokenCounter.messageOverhead)
      assert.match(window.history[0]?.id ?? "", /^t-\d+$/)
      const hits = yield* (yield* RecallSource.RecallSource).recall({
        kind: "recall",
        stream: "s",
        query: "x",
        budget: 100
      })
      assert.strictEqual(hits.length, 1)
      const records = (yield* storedChain("s")).map((envelope) => ({ ...envelope, stream: "s" }))
      assert.isFalse(EventHash.verify(records).ok)
      assert.isTrue(EventHash.verify(records, "k1").ok)
    }).pipe(
      Effect.provide(
        ContextService.layerMemory({
          tokenCounter: TokenCounter.layerHeuristic(),
          ids: Ids.layerSequential("t"),
          recall: RecallSource.layerStatic({ recall: [{ message: Message.user("remembered"), score: 1 }] }),
          hmacKey: "k1"
        })
      )
    )
  )

  it.effect("layer(options) takes the service's options, layer() its defaults", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const { window } = yield* ctx.appendMessages("s", [Message.user("a")])
      assert.strictEqual(window.version, 1)
    }).pipe(
      Effect.provide(
        ContextService.layer({ cacheStreams: 1 }).pipe(
          Layer.provideMerge(WindowRepository.layerReplay({ integrity: "unverified" })),
          Layer.provideMerge(EventLog.layerMemory()),
          Layer.provideMerge(
            Layer.mergeAll(TokenCounter.layerHeuristic(), Ids.layerSequential("t"), RecallSource.layerEmpty)
          )
        )
      )
    )
  )
})
