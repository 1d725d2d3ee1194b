import { ContextService, Message, ToolPairs } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { TieredCompaction, UndoCompaction } from "../src/index.js"
import { testLayer, toolTurn } from "./harness.js"

describe("undoCompaction", () => {
  it.effect("brings the removed messages back from the log, drops the summary, restores carry-over and watermark", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages("u", [...toolTurn("one", "ls", 300), ...toolTurn("two", "cat", 300)])
      const first = yield* TieredCompaction.compactContext("u", 200, { keepTokens: 0 })
      assert.strictEqual(first._tag, "Compacted")
      const before = yield* ctx.appendMessages("u", toolTurn("three", "grep", 300))
      const second = yield* TieredCompaction.compactContext("u", 200, { keepTokens: 100 })
      if (second._tag !== "Compacted") return assert.fail("expected a compaction")
      const compactedId = second.events[0]?.id ?? ""
      const undone = yield* UndoCompaction.undoCompaction("u", compactedId)
      assert.deepStrictEqual(
        undone.window.history.map((message) => message.id),
        before.window.history.map((message) => message.id)
      )
      assert.deepStrictEqual(
        undone.window.history.map((message) => message.parts),
        before.window.history.map((message) => message.parts)
      )
      assert.strictEqual(undone.window.carryOver, before.window.carryOver)
      assert.strictEqual(undone.window.watermark, before.window.watermark)
      assert.strictEqual(undone.window.tokens.total, before.window.tokens.total)
      assert.deepStrictEqual(ToolPairs.problems(undone.window.history, undone.window.completedToolIds), [])
      assert.strictEqual(undone.events[0]?._tag, "CompactionReverted")
      // Undoing it again: its summary is gone.
      const again = yield* Effect.flip(UndoCompaction.undoCompaction("u", compactedId))
      assert.strictEqual(again._tag, "CompactionNotUndoable")
      // The first compaction's summary was rolled into the second: after the undo it is back, so it can be undone too.
      if (first._tag === "Compacted") {
        const both = yield* UndoCompaction.undoCompaction("u", first.events[0]?.id ?? "")
        assert.deepStrictEqual(both.window.history.map((message) => Message.textOf(message)).slice(0, 1), ["one"])
      }
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("an unknown or non-compaction event id is a typed error and writes nothing", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const out = yield* ctx.appendMessages("x", [Message.user("hi")])
      const unknown = yield* Effect.flip(UndoCompaction.undoCompaction("x", "nope"))
      assert.strictEqual(unknown._tag, "CompactionNotFound")
      const notCompaction = yield* Effect.flip(UndoCompaction.undoCompaction("x", out.events[0]?.id ?? ""))
      assert.strictEqual(notCompaction._tag, "CompactionNotFound")
      assert.strictEqual((yield* ctx.load("x")).version, 1)
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("issue 39 defect 1: undoing a compaction that rolled a seam in gives the seam its entry back", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const start = yield* ctx.appendMessages("s", [...toolTurn("one", "ls", 300), ...toolTurn("two", "cat", 300)])
      const [seam] = yield* ctx.prepare(
        [{ role: "assistant", parts: [Message.text('<archived_context level="2">\nearlier\n</archived_context>')] }],
        "seam"
      )
      if (seam === undefined) return assert.fail("no seam message")
      const folded = start.window.history.slice(0, 4).map((message) => message.id)
      const seamed = yield* ctx.run("s", () =>
        Either.right([{ _tag: "SeamProduced", level: 2, message: seam, replacedIds: folded } as const])
      )
      assert.deepStrictEqual(seamed.window.seams, [{ messageId: seam.id, level: 2 }])
      const compacted = yield* TieredCompaction.compactContext("s", 50, { keepTokens: 0 })
      if (compacted._tag !== "Compacted") return assert.fail("expected a compaction")
      assert.isFalse(
        compacted.window.history.some((message) => message.id === seam.id),
        "the seam was rolled in"
      )
      const undone = yield* UndoCompaction.undoCompaction("s", compacted.events[0]?.id ?? "")
      assert.deepStrictEqual(
        undone.window.history.map((message) => message.id),
        seamed.window.history.map((message) => message.id)
      )
      assert.deepStrictEqual(undone.window.seams, seamed.window.seams)
    }).pipe(Effect.provide(testLayer))
  )
})
