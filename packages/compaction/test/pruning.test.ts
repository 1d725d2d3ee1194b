import { ContextService, Message, ToolPairs, type Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { CompressionPlan, ToolOutputPruning } from "../src/index.js"
import { filler, testLayer } from "./harness.js"

const rounds = (tools: ReadonlyArray<string>, from = 0) =>
  tools.flatMap((tool, n) => {
    const i = from + n
    return [
      Message.assistant("", [Message.toolCall(`c${i}`, tool, { i })]),
      Message.tool(`c${i}`, `first line of ${tool} #${i}\n${filler(1000)}`, i === 0)
    ]
  })

const outputs = (window: Window.Window) =>
  window.history.flatMap((message) => Message.toolResultsOf(message).map((part) => part.content))

describe("tool-output pruning", () => {
  it.effect("keeps the newest K whole and stubs the rest, keeping the call/result structure", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const before = (yield* ctx.appendMessages("p", [Message.user("go"), ...rounds(["a", "b", "c", "d", "e"])])).window
      const after = (yield* ToolOutputPruning.pruneToolOutputs("p", { keepRecent: 2 })).window
      const contents = outputs(after)
      const original = `first line of a #0\n${filler(1000)}`
      assert.strictEqual(contents[0], `[tool output pruned: a, ${original.length} chars, error] first line of a #0`)
      assert.isTrue(contents.slice(0, 3).every((content) => content.startsWith(ToolOutputPruning.stubPrefix)))
      assert.isTrue(contents.slice(3).every((content) => content.length > 1000))
      assert.strictEqual(after.history.length, before.history.length)
      assert.deepStrictEqual(ToolPairs.problems(after.history, after.completedToolIds), [])
      assert.isBelow(after.tokens.history, before.tokens.history)
      // Stubs are never pruned again.
      assert.strictEqual((yield* ToolOutputPruning.pruneToolOutputs("p", { keepRecent: 2 })).events.length, 0)
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("per-tool limits: keepRecent per tool and head/tail cuts above maxChars", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages("t", [Message.user("go"), ...rounds(["read", "bash", "read", "bash", "read"])])
      const after = (yield* ToolOutputPruning.pruneToolOutputs("t", {
        keepRecent: 10,
        perTool: { read: { keepRecent: 1 }, bash: { maxChars: 300 } }
      })).window
      const [read0, bash1, read2, bash3, read4] = outputs(after)
      assert.isTrue(read0?.startsWith(ToolOutputPruning.stubPrefix))
      assert.isTrue(read2?.startsWith(ToolOutputPruning.stubPrefix))
      assert.isAbove(read4?.length ?? 0, 1000)
      for (const cut of [bash1, bash3]) {
        assert.isAtMost(cut?.length ?? 0, 300)
        assert.include(cut ?? "", "characters pruned")
      }
      // A cut output is within its limit, so it is not cut again.
      assert.strictEqual(
        (yield* ToolOutputPruning.pruneToolOutputs("t", { keepRecent: 10, perTool: { bash: { maxChars: 300 } } }))
          .events.length,
        0
      )
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("batch: prunes nothing until enough outputs would change", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages("b", [Message.user("go"), ...rounds(["a", "b", "c"])])
      assert.strictEqual((yield* ToolOutputPruning.pruneToolOutputs("b", { keepRecent: 2, batch: 2 })).events.length, 0)
      yield* ctx.appendMessages("b", rounds(["d"], 3))
      assert.strictEqual((yield* ToolOutputPruning.pruneToolOutputs("b", { keepRecent: 2, batch: 2 })).events.length, 1)
    }).pipe(Effect.provide(testLayer))
  )
})

describe("tool-output pruning threshold", () => {
  it.effect("clearAtLeast: prunes nothing unless enough tokens are freed", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const window = (yield* ctx.appendMessages("cl", [Message.user("go"), ...rounds(["a", "b", "c"])])).window
      const plan = ToolOutputPruning.plan(window, { keepRecent: 2 }, (message) => Message.tokenTextOf(message).length)
      assert.strictEqual(plan?.length, 1)
      assert.isUndefined(ToolOutputPruning.plan(window, { keepRecent: 2, clearAtLeast: 100_000 }, () => 1))
      assert.strictEqual(
        (yield* ToolOutputPruning.pruneToolOutputs("cl", { keepRecent: 2, clearAtLeast: 10_000 })).events.length,
        0
      )
      assert.strictEqual(
        (yield* ToolOutputPruning.pruneToolOutputs("cl", { keepRecent: 2, clearAtLeast: 100 })).events.length,
        1
      )
    }).pipe(Effect.provide(testLayer))
  )
})

describe("compressionPlan", () => {
  it.effect("never splits a tool pair, keeps pinned groups and unanswered calls, drains a tail that does not fit", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const window = (yield* ctx.appendMessages("cp", [
        { ...Message.user("pinned instructions"), pinned: true },
        Message.user(filler(400)),
        Message.assistant("", [Message.toolCall("k1", "ls", {}), Message.toolCall("k2", "ls", {})]),
        Message.tool("k1", filler(400)),
        Message.user(filler(40)),
        Message.tool("k2", filler(400)),
        Message.assistant(filler(2000)),
        Message.assistant("", [Message.toolCall("open", "bash", {})]),
        // The user's latest ask stays as well (issue 39); the interleaved one above is an earlier ask.
        Message.user("go on")
      ])).window
      const small = CompressionPlan.compressionPlan(window, 50)
      const removed = new Set(small.removeIds)
      const kept = window.history.filter((message) => !removed.has(message.id))
      assert.deepStrictEqual(ToolPairs.problems(kept), [])
      // Pinned message and the unanswered call stay; the long reasoning tail is drained into the summary.
      assert.strictEqual(kept[0]?.pinned, true)
      assert.deepStrictEqual(
        Message.toolCallsOf(kept[kept.length - 2] ?? { parts: [] }).map((call) => call.id),
        ["open"]
      )
      assert.strictEqual(Message.textOf(kept[kept.length - 1] ?? { parts: [] }), "go on")
      assert.strictEqual(kept.length, 3)
      assert.strictEqual(small.toSummarize.length, 6)
      // The interleaved user message between k1 and k2 results: the whole group leaves together.
      assert.isTrue(removed.has(window.history[5]?.id ?? ""))
      const roomy = CompressionPlan.compressionPlan(window, 100_000)
      assert.isTrue(CompressionPlan.isEmpty(roomy))
    }).pipe(Effect.provide(testLayer))
  )
})
