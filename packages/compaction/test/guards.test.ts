// Issue 39, build item 2: a summary is checked before its event is written. A compactor that returns an
// empty summary, a fallback text, or one that drops a pinned path is refused with its typed reason, the
// refusal is recorded (`CompactionFailed`, reason `guard:…`), and nothing else is written. A summary
// folding a call still waiting for its result is refused by the same check (no plan folds one since the
// window keeps pending calls, so it is shown on the guard itself). The turn falling to its next tier is
// `packages/turn/test/summaryGuards.test.ts`.
import { ContextService, EventLog, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"
import { SummaryGuard, TieredCompaction } from "../src/index.js"
import { filler, testLayer, toolTurn } from "./harness.js"

/** Compact stream `stream` now with a compactor answering `summary`: the refusal, and what the log holds. */
const refusedWith = (stream: string, summary: string, guard?: TieredCompaction.Guard) =>
  Effect.gen(function* () {
    const ctx = yield* ContextService.ContextService
    const before = yield* ctx.appendMessages(stream, [
      ...toolTurn("open src/cart.js", "cat", 400),
      ...toolTurn("fix the total in src/cart.js", "edit", 400),
      Message.user(`and now the tests ${filler(200)}`)
    ])
    const refused = yield* Effect.flip(
      TieredCompaction.compactContext(stream, 200, {
        keepTokens: 0,
        hooks: { summarize: () => Effect.succeed({ summary }) },
        ...(guard === undefined ? {} : { guard })
      })
    )
    const after = yield* ctx.load(stream)
    assert.strictEqual(after.version, before.window.version + 1, "only the refusal was written")
    assert.deepStrictEqual(
      after.history.map((message) => message.id),
      before.window.history.map((message) => message.id)
    )
    return refused
  })

describe("summary guards (issue 39, build item 2)", () => {
  it.effect("an empty summary is refused with reason empty, and recorded", () =>
    Effect.gen(function* () {
      const refused = yield* refusedWith("g-empty", "   ")
      assert.strictEqual(refused._tag, "SummaryRefused")
      if (refused._tag === "SummaryRefused") assert.strictEqual(refused.reason, "empty")
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("a fallback text is refused with reason fallback", () =>
    Effect.gen(function* () {
      const refused = yield* refusedWith("g-fallback", "No summary available.")
      if (refused._tag !== "SummaryRefused") return assert.fail(refused.message)
      assert.strictEqual(refused.reason, "fallback")
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("a summary dropping a pinned path is refused with reason pinned, naming the path", () =>
    Effect.gen(function* () {
      const refused = yield* refusedWith("g-pinned", "The user asked for fixes; they were made.", {
        pinnedIdentifiers: ["src/cart.js", "src/never-mentioned.js"]
      })
      if (refused._tag !== "SummaryRefused") return assert.fail(refused.message)
      assert.strictEqual(refused.reason, "pinned")
      assert.deepStrictEqual(refused.dropped, ["src/cart.js"])
    }).pipe(Effect.provide(testLayer))
  )

  it.effect("the refusal is recorded as CompactionFailed with its guard reason", () =>
    Effect.gen(function* () {
      yield* refusedWith("g-recorded", "")
      const log = yield* EventLog.EventLog
      const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("g-recorded")))
      const last = events.at(-1)?.event
      assert.strictEqual(last?._tag, "CompactionFailed")
      if (last?._tag === "CompactionFailed") assert.match(last.reason, /^guard:empty: /)
    }).pipe(Effect.provide(testLayer))
  )

  it("a summary folding a call still waiting for its result is refused with reason pending_call", () => {
    const message = (id: string, parts: ReadonlyArray<Message.Part>, role: Message.Role): Message.Message => ({
      id,
      role,
      kind: "chat",
      parts,
      tokens: 10
    })
    const folded = [
      message("u1", [Message.text("read a.ts")], "user"),
      message("a1", [Message.toolCall("c1", "read", { path: "a.ts" })], "assistant")
    ]
    const kept = [message("u2", [Message.text("meanwhile")], "user")]
    const result = SummaryGuard.check("The user asked to read a.ts; it was read.", { folded, kept })
    assert.isTrue(Either.isLeft(result))
    if (Either.isLeft(result)) {
      assert.strictEqual(result.left.reason, "pending_call")
      assert.deepStrictEqual(result.left.dropped, ["c1"])
    }
    // With its result kept, the same fold passes.
    const answered = [...kept, message("t1", [Message.toolResult("c1", "contents")], "tool")]
    assert.isTrue(Either.isRight(SummaryGuard.check("The user asked to read a.ts.", { folded, kept: answered })))
  })

  it("by default (keepUserAsk unset or true), a summary folding the latest ask must quote it whole", () => {
    const ask: Message.Message = {
      id: "u1",
      role: "user",
      kind: "chat",
      parts: [Message.text("fix cart.js")],
      tokens: 5
    }
    const refused = SummaryGuard.check("Work on the cart.", { folded: [ask], kept: [], keepUserAsk: true })
    assert.isTrue(Either.isLeft(refused) && refused.left.reason === "user_ask")
    assert.isTrue(
      Either.isRight(SummaryGuard.check("Asked: fix cart.js", { folded: [ask], kept: [], keepUserAsk: true }))
    )
    // On by default since the plans keep the ask (ADR 0114); false turns it off.
    const byDefault = SummaryGuard.check("Work on the cart.", { folded: [ask], kept: [] })
    assert.isTrue(Either.isLeft(byDefault) && byDefault.left.reason === "user_ask")
    assert.isTrue(
      Either.isRight(SummaryGuard.check("Work on the cart.", { folded: [ask], kept: [], keepUserAsk: false }))
    )
    // A tool result carried by a user message is no ask.
    const result: Message.Message = { ...ask, id: "r1", parts: [Message.toolResult("c1", "ok")] }
    assert.isTrue(Either.isRight(SummaryGuard.check("Work on the cart.", { folded: [ask], kept: [result] })) === false)
  })
})
