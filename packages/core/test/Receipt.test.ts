// Receipts (issue 39, build item 1; ADR 0102): every event that replaces or removes window messages is
// written with a receipt — the window's tokens before and after, the tokens the replaced messages held and
// the events that put them there — whatever path wrote it (a command, a `run` decision, a batch), and a
// producer's own part (reason, dropped identifiers, ids outside the window) is kept.
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { ContextService, EventLog, Message, Receipt, Window, type WindowEvent } from "../src/index.js"

const stored = (stream: string) =>
  Effect.gen(function* () {
    const log = yield* EventLog.EventLog
    return Chunk.toReadonlyArray(yield* Stream.runCollect(log.read(stream))).map((envelope) => envelope.event)
  })

const sumTokens = (window: Window.Window, ids: ReadonlyArray<string>) =>
  ids.reduce((sum, id) => sum + (Window.findMessage(window, id)?.tokens ?? 0), 0)

describe("Receipt", () => {
  it.effect("a trim's receipt: window tokens before and after, the removed messages' tokens and origins", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const first = yield* ctx.appendMessages("s", [Message.user("one two three"), Message.assistant("four five")])
      const second = yield* ctx.appendMessages("s", [Message.user("six seven eight nine ten")])
      const before = second.window
      const { events, window: after } = yield* ctx.trimToBudget("s", before.tokens.history - 1)
      const trimmed = events[0]
      assert.strictEqual(trimmed?._tag, "HistoryTrimmed")
      if (trimmed?._tag !== "HistoryTrimmed") return
      assert.isAbove(trimmed.removedIds.length, 0)
      assert.deepStrictEqual(trimmed.receipt, {
        tokensBefore: before.tokens.total,
        tokensAfter: after.tokens.total,
        replacedTokens: sumTokens(before, trimmed.removedIds),
        sources: [first.events[0]?.id ?? "?"]
      })
      assert.isBelow(after.tokens.total, before.tokens.total)
      // What the log holds is what the service answered.
      const log = yield* stored("s")
      assert.deepStrictEqual(log.at(-1), trimmed)
    }).pipe(Effect.provide(ContextService.layerMemory()))
  )

  it.effect("a compaction written by a run decision keeps the producer's reason and gets the rest", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const a = yield* ctx.appendMessages("s", [Message.user("alpha beta gamma")])
      const b = yield* ctx.appendMessages("s", [Message.assistant("delta epsilon")])
      const [summary] = yield* ctx.prepare([Message.user("summary of alpha")], "summary")
      if (summary === undefined) return assert.fail("no summary")
      const removedIds = [...a.window.history, ...b.window.history.slice(1)].map((message) => message.id)
      const before = b.window
      const { events, window: after } = yield* ctx.run("s", (window) =>
        Either.right<ReadonlyArray<WindowEvent.Draft>>([
          { _tag: "TurnCompleted" },
          {
            _tag: "Compacted",
            tier: "manual",
            summary,
            removedIds,
            carryOver: null,
            throughVersion: window.version,
            cooldownTurns: 0,
            receipt: Receipt.draft({ reason: "asked by the user", dropped: ["src/cart.js"] })
          }
        ])
      )
      const compacted = events[1]
      if (compacted?._tag !== "Compacted") return assert.fail("no Compacted")
      assert.deepStrictEqual(compacted.receipt, {
        tokensBefore: before.tokens.total,
        tokensAfter: after.tokens.total,
        replacedTokens: sumTokens(before, removedIds),
        sources: [a.events[0]?.id ?? "?", b.events[0]?.id ?? "?"],
        reason: "asked by the user",
        dropped: ["src/cart.js"]
      })
      assert.strictEqual(after.tokens.total - before.tokens.total, summary.tokens - sumTokens(before, removedIds))
    }).pipe(Effect.provide(ContextService.layerMemory()))
  )

  it.effect("inside a batch each receipt is taken on the window the events before it lead to", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      yield* ctx.appendMessages("s", [Message.user("one"), Message.user("two"), Message.user("three")])
      const start = yield* ctx.load("s")
      const [m1, m2] = start.history
      if (m1 === undefined || m2 === undefined) return assert.fail("no history")
      const batched = yield* ctx.batch(
        "s",
        Effect.gen(function* () {
          yield* ctx.run("s", () =>
            Either.right<ReadonlyArray<WindowEvent.Draft>>([
              { _tag: "MessagesRemoved", messageIds: [m2.id], reason: "a" }
            ])
          )
          yield* ctx.run("s", () =>
            Either.right<ReadonlyArray<WindowEvent.Draft>>([
              { _tag: "MessagesRemoved", messageIds: [m2.id, m1.id], reason: "b" }
            ])
          )
        })
      )
      const [removedA, removedB] = batched.events
      if (removedA?._tag !== "MessagesRemoved" || removedB?._tag !== "MessagesRemoved") return assert.fail("events")
      assert.strictEqual(removedA.receipt?.replacedTokens, m2.tokens)
      // m2 already left: the second removal gave up only m1.
      assert.strictEqual(removedB.receipt?.replacedTokens, m1.tokens)
      assert.strictEqual(removedB.receipt?.tokensBefore, removedA.receipt?.tokensAfter)
      assert.strictEqual(removedB.receipt?.tokensAfter, batched.window.tokens.total)
    }).pipe(Effect.provide(ContextService.layerMemory()))
  )

  it("events that replace nothing are passed through untouched (no copy)", () => {
    const events: ReadonlyArray<WindowEvent.WindowEvent> = [{ _tag: "TurnCompleted", id: "e1" }]
    assert.strictEqual(Receipt.attach(Window.empty, events), events)
  })
})
