// Issue 11 (seed fidelity and budget correctness): each describe names the item it covers.
import { ContextService, EventLog, Message, ToolPairs, type Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { Budget, CompactionStatus, TieredCompaction, ToolOutputPruning } from "../src/index.js"
import { CompactorProbe, filler, fillWithTools, toolTurn } from "./harness.js"
import { stores, storeLayer } from "./support/stores.js"

const config = {
  budget: 4000,
  softThreshold: 0.7,
  hardThreshold: 0.85,
  targetRatio: 0.5,
  cooldownTurns: 2,
  maxSummaryTokens: 300,
  prune: { keepRecent: 2, minChars: 200 }
} satisfies TieredCompaction.Config

const resultOf = (window: Window.Window, toolCallId: string) =>
  window.history.flatMap((message) => Message.toolResultsOf(message)).find((part) => part.toolCallId === toolCallId)

/** A tool call and its result with no assistant message after it: the model has not seen it. */
const unseenResult = (stream: string, id: string, content: string) =>
  Effect.flatMap(ContextService.ContextService, (ctx) =>
    ctx.appendMessages(stream, [
      Message.user(`now run ${id}`),
      Message.assistant("", [Message.toolCall(id, "cat", { path: `${id}.log` })]),
      Message.tool(id, content)
    ])
  )

for (const store of stores) {
  describe(`item 1 on ${store.name}: the budget is the context window minus output reserve, tool schemas and reminder`, () => {
    it("available subtracts every reserve and never goes negative", () => {
      const budget = Budget.make({ contextWindow: 8192, outputReserve: 4096, toolTokens: 500, reminderTokens: 20 })
      assert.strictEqual(Budget.available(budget), 8192 - 4096 - 500 - 20)
      assert.strictEqual(Budget.available(Budget.make({ contextWindow: 1000, outputReserve: 4096 })), 0)
      assert.strictEqual(Budget.tokensOf(1234), 1234)
      assert.isTrue(Budget.fits(budget, 8192 - 4096))
      assert.isFalse(Budget.fits(budget, 8192 - 4095))
    })

    it.effect("pressure and compaction use the available budget, not the raw context window", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        // 8k window, 4k output limit: 3,600 tokens of prompt is already Hard pressure.
        const budget = Budget.make({ contextWindow: 8192, outputReserve: 4096 })
        const withReserve = { ...config, budget }
        yield* ctx.appendMessages("b1", [
          Message.user(filler(7200, "q")),
          Message.assistant(filler(7200, "a")),
          Message.user("and now?")
        ])
        const window = yield* ctx.load("b1")
        assert.strictEqual(TieredCompaction.pressure(window, { ...config, budget: 8192 }), "None")
        assert.strictEqual(TieredCompaction.pressure(window, withReserve), "Hard")
        const result = yield* TieredCompaction.maybeCompact("b1", withReserve)
        assert.strictEqual(result._tag, "Compacted")
        // The render plus the whole output limit fits the 8k window.
        assert.isTrue(Budget.fits(budget, result.window.tokens.total))
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("a budget whose reserves take the whole window is a typed config error", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(
          TieredCompaction.maybeCompact("b2", {
            ...config,
            budget: Budget.make({ contextWindow: 4096, outputReserve: 4096 })
          })
        )
        assert.strictEqual(error._tag, "InvalidConfig")
        assert.include(error.message, "reserves take the whole context window")
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })
}

for (const store of stores) {
  describe(`item 2 on ${store.name}: a tool result the model has not seen is never compacted, pruned or summarized`, () => {
    it.effect("one that fits stays whole through the soft tier and a hard compaction", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* fillWithTools(config, "u1", "Soft")
        const content = `fresh output\n${filler(1600, "f")}`
        yield* unseenResult("u1", "fresh", content)
        // Into a nearly full window; keepRecent 0 would have stubbed it under the old pruning.
        const result = yield* TieredCompaction.maybeCompact("u1", { ...config, prune: { keepRecent: 0 } })
        assert.strictEqual(resultOf(result.window, "fresh")?.content, content)
        assert.deepStrictEqual(ToolPairs.problems(result.window.history, result.window.completedToolIds), [])
        const window = yield* ctx.load("u1")
        assert.strictEqual(resultOf(window, "fresh")?.content, content)
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect(
      "one that cannot fit alone is truncated to fit, head and tail kept with a marker, as a ToolOutputPruned event",
      () =>
        Effect.gen(function* () {
          const ctx = yield* ContextService.ContextService
          const log = yield* EventLog.EventLog
          yield* fillWithTools(config, "u2", "Soft")
          const content = `HEAD-OF-OUTPUT\n${filler(24_000, "z")}\nTAIL-OF-OUTPUT`
          yield* unseenResult("u2", "huge", content)
          const result = yield* TieredCompaction.maybeCompact("u2", config)
          const after = resultOf(result.window, "huge")?.content ?? ""
          assert.isTrue(after.startsWith("HEAD-OF-OUTPUT"))
          assert.isTrue(after.endsWith("TAIL-OF-OUTPUT"))
          assert.match(after, /\[\.\.\. \d+ of 24\d{3} characters cut to fit the context window/)
          assert.include(after, "re-run the tool on a narrower range")
          assert.isAtMost(result.window.tokens.total, config.budget)
          // Never summarized: no compaction removed it.
          for (const event of result._tag === "NoChange" ? [] : result.events) {
            if (event._tag === "Compacted") {
              const removed = new Set(event.removedIds)
              assert.isFalse(result.window.history.some((message) => removed.has(message.id)))
            }
          }
          const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("u2")))
          const truncation = events.find(
            (envelope) =>
              envelope.event._tag === "ToolOutputPruned" &&
              envelope.event.outputs.some((output) => output.toolCallId === "huge")
          )
          assert.isDefined(truncation)
          // The original stays in the log.
          assert.isTrue(
            events.some((envelope) => envelope.data.includes("TAIL-OF-OUTPUT") && envelope.type === "MessageAppended")
          )
          assert.deepStrictEqual(
            yield* Effect.map(ctx.load("u2"), (window) => resultOf(window, "huge")?.content),
            after
          )
        }).pipe(Effect.provide(storeLayer(store)))
    )
  })

  describe(`item 5 on ${store.name}: maybeSoftCompactMidIteration`, () => {
    it.effect("returns at once when a compaction already ran this turn, even at Hard pressure", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        yield* TieredCompaction.compactContext("m1").pipe(Effect.ignore)
        yield* ctx.appendMessages("m1", toolTurn("first", "grep", 400))
        yield* TieredCompaction.compactContext("m1", 300, { keepTokens: 0 })
        assert.isTrue((yield* ctx.load("m1")).compaction.compactedThisTurn)
        const before = yield* fillWithTools(config, "m1", "Hard")
        const result = yield* TieredCompaction.maybeSoftCompactMidIteration("m1", config)
        assert.strictEqual(result._tag, "NoChange")
        if (result._tag === "NoChange") assert.strictEqual(result.reason, "already compacted this turn")
        assert.strictEqual((yield* ctx.load("m1")).version, before.version)
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("prunes only until the window is under the Soft threshold", () =>
      Effect.gen(function* () {
        const before = yield* fillWithTools(config, "m2", "Hard")
        const result = yield* TieredCompaction.maybeSoftCompactMidIteration("m2", config)
        assert.strictEqual(result._tag, "SoftCompacted")
        assert.strictEqual(TieredCompaction.pressure(result.window, config), "None")
        const outputs = result.window.history.flatMap((message) => Message.toolResultsOf(message))
        const stubs = outputs.filter((part) => part.content.startsWith(ToolOutputPruning.stubPrefix))
        // Oldest first, and no more than needed: some older outputs outside keepRecent stay whole.
        assert.isAbove(stubs.length, 0)
        assert.isBelow(stubs.length, outputs.length - 2)
        assert.isTrue(outputs[0]?.content.startsWith(ToolOutputPruning.stubPrefix))
        // One stub fewer would leave the window at Soft pressure or above.
        const freedPerStub = (before.tokens.total - result.window.tokens.total) / stubs.length
        assert.isAtLeast(result.window.tokens.total + freedPerStub, config.budget * config.softThreshold - 1)
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("returns at once below Soft", () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const before = (yield* ctx.appendMessages("m3", toolTurn("one", "grep", 2400))).window
        const result = yield* TieredCompaction.maybeSoftCompactMidIteration("m3", config)
        assert.strictEqual(result._tag, "NoChange")
        assert.strictEqual((yield* ctx.load("m3")).version, before.version)
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })
}

for (const store of stores) {
  describe(`item 12 on ${store.name}: compaction reports progress to an optional status service`, () => {
    const recording = Effect.gen(function* () {
      const seen = yield* Ref.make<ReadonlyArray<CompactionStatus.Status>>([])
      const layer = CompactionStatus.layer((status) => Ref.update(seen, (all) => [...all, status]))
      return { seen, layer }
    })

    it.effect("maybeCompact: started, the tiers it ran, finished with tokens before and after", () =>
      Effect.gen(function* () {
        const { seen, layer } = yield* recording
        const ctx = yield* ContextService.ContextService
        yield* ctx.appendMessages("s1", toolTurn("look", "ls", 300))
        yield* ctx.appendMessages("s1", [Message.user(filler(8000, "q")), Message.assistant(filler(8000, "a"))])
        const result = yield* TieredCompaction.maybeCompact("s1", config).pipe(Effect.provide(layer))
        assert.strictEqual(result._tag, "Compacted")
        const reports = yield* Ref.get(seen)
        assert.deepStrictEqual(
          reports.map((status) => (status._tag === "TierStarted" ? `${status._tag}:${status.tier}` : status._tag)),
          ["Started", "TierStarted:soft", "TierStarted:hard", "Finished"]
        )
        const finished = reports[reports.length - 1]
        assert.strictEqual(finished?._tag, "Finished")
        if (finished?._tag === "Finished") {
          assert.strictEqual(finished.result, "Compacted")
          assert.isAbove(finished.tokensBefore, finished.tokensAfter)
          assert.strictEqual(finished.tokensAfter, result.window.tokens.total)
        }
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("truncating an unseen result to fit is reported as the fit tier", () =>
      Effect.gen(function* () {
        const { seen, layer } = yield* recording
        yield* unseenResult("s3", "big", filler(30_000, "b"))
        yield* TieredCompaction.maybeCompact("s3", config).pipe(Effect.provide(layer))
        const tiers = (yield* Ref.get(seen)).flatMap((status) => (status._tag === "TierStarted" ? [status.tier] : []))
        assert.strictEqual(tiers[tiers.length - 1], "fit")
      }).pipe(Effect.provide(storeLayer(store)))
    )

    it.effect("a compactor failure is reported as Failed; without a status service nothing is required", () =>
      Effect.gen(function* () {
        const { seen, layer } = yield* recording
        const ctx = yield* ContextService.ContextService
        const probe = yield* CompactorProbe
        yield* ctx.appendMessages("s2", [Message.user(filler(8000, "q")), Message.assistant(filler(8000, "a"))])
        yield* Ref.set(probe.failNext, 1)
        yield* Effect.flip(TieredCompaction.maybeProactiveCompress("s2", config).pipe(Effect.provide(layer)))
        const reports = yield* Ref.get(seen)
        assert.deepStrictEqual(
          reports.map((status) => status._tag),
          ["Started", "TierStarted", "Failed"]
        )
        const failed = reports[2]
        if (failed?._tag === "Failed") assert.include(failed.reason, "scripted failure")
        // No status service in context: still runs (the no-op default).
        const plain = yield* TieredCompaction.maybeProactiveCompress("s2", config)
        assert.strictEqual(plain._tag, "Compacted")
      }).pipe(Effect.provide(storeLayer(store)))
    )
  })
}
