/**
 * Issue 39's window invariants, each reproduced as it failed on main before its fix: the seam list
 * follows the seams in history under every removal and under an undo (defects 1 and 2), and no trim
 * drops a tool call still waiting for its result (defect 5). The property over random sequences of
 * every operation is `packages/turn/test/invariants.property.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { CompressionPlan, Decide, Message, Window, type WindowEvent } from "../src/index.js"
import { appended, message, stampAll } from "./Scenario.js"

const given = (drafts: ReadonlyArray<WindowEvent.Draft>): Window.Window => Window.replay(stampAll(drafts))

const decided = (window: Window.Window, command: Decide.WindowCommand, prefix: string): Window.Window => {
  const drafts = Decide.decide(window, command)
  if (Either.isLeft(drafts)) return assert.fail(drafts.left.message)
  return Window.replay(stampAll(drafts.right, prefix), window)
}

const seam = message("s1", "assistant", '<archived_context level="1">\nearlier\n</archived_context>', {
  kind: "seam",
  tokens: 20
})

describe("window invariants (issue 39)", () => {
  it("defect 2: trimToBudget leaves no seam entry for the seam it dropped", () => {
    const window = given([
      appended(message("u1", "user", "one")),
      appended(message("a1", "assistant", "two")),
      { _tag: "SeamProduced", level: 1, message: seam, replacedIds: ["u1", "a1"] },
      appended(message("u2", "user", "three", { tokens: 100 })),
      appended(message("a2", "assistant", "four", { tokens: 100 }))
    ])
    assert.deepStrictEqual(window.seams, [{ messageId: "s1", level: 1 }])
    const trimmed = decided(window, { _tag: "TrimToBudget", budget: 150 }, "trim")
    assert.isFalse(trimmed.history.some((each) => each.id === "s1"))
    assert.deepStrictEqual(trimmed.seams, [])
  })

  it("defect 5: trimToBudget keeps a tool call still waiting for its result, so the result can be appended", () => {
    const call = message("a1", "assistant", [Message.toolCall("c1", "read", { path: "a.ts" })], { tokens: 100 })
    const window = given([
      appended(message("u1", "user", "read it", { tokens: 100 })),
      appended(call),
      appended(message("u2", "user", "and meanwhile", { tokens: 100 })),
      appended(message("a2", "assistant", "working", { tokens: 100 }))
    ])
    const trimmed = decided(window, { _tag: "TrimToBudget", budget: 150 }, "trim")
    assert.isTrue(
      trimmed.history.some((each) => each.id === "a1"),
      "the pending call stays"
    )
    const answered = Decide.decide(trimmed, {
      _tag: "AppendMessages",
      messages: [message("t1", "tool", [Message.toolResult("c1", "contents")])]
    })
    assert.isTrue(Either.isRight(answered), "its result can still be appended")
  })

  it("defect 1: undoing a compaction that rolled a seam in restores the seam's entry and drops the summary's", () => {
    const before = given([
      appended(message("u1", "user", "one")),
      appended(message("a1", "assistant", "two")),
      { _tag: "SeamProduced", level: 2, message: seam, replacedIds: ["u1", "a1"] },
      appended(message("u2", "user", "three")),
      appended(message("a2", "assistant", "four"))
    ])
    const summary = message("sum", "user", "summary of it all", { kind: "summary" })
    const compacted: WindowEvent.EventOf<"Compacted"> = {
      _tag: "Compacted",
      id: "compaction",
      tier: "hard",
      summary,
      removedIds: ["s1", "u2"],
      carryOver: "summary of it all",
      throughVersion: 5,
      cooldownTurns: 0
    }
    const after = Window.evolve(before, compacted)
    assert.deepStrictEqual(after.seams, [{ messageId: "sum", level: 2 }])
    const reverted: WindowEvent.EventOf<"CompactionReverted"> = {
      _tag: "CompactionReverted",
      id: "undo",
      compactionEventId: "compaction",
      removedIds: ["sum"],
      restored: before.history.filter((each) => each.id === "s1" || each.id === "u2"),
      carryOver: before.carryOver,
      watermark: before.watermark,
      seams: before.seams.filter((entry) => entry.messageId === "s1")
    }
    const undone = Window.evolve(after, reverted)
    assert.deepStrictEqual(
      undone.history.map((each) => each.id),
      before.history.map((each) => each.id)
    )
    assert.deepStrictEqual(undone.seams, before.seams)
  })
  // The demo's turn 24 (issue 39): a hard compaction at the start of a turn summarized the message the
  // user had just sent, and the request held no user message. The latest ask stays, like a pinned one.
  const longTurn = (): Window.Window =>
    given([
      appended(message("u1", "user", "first ask", { tokens: 100 })),
      appended(message("a1", "assistant", "first answer", { tokens: 100 })),
      appended(message("u2", "user", "the ask of this turn", { tokens: 300 })),
      appended(message("a2", "assistant", [Message.toolCall("c1", "read", { path: "a.ts" })], { tokens: 50 })),
      appended(message("t1", "tool", [Message.toolResult("c1", "contents")], { tokens: 50 })),
      appended(message("a3", "assistant", "working on it", { tokens: 100 }))
    ])

  it("the compression plan never folds the user's latest ask", () => {
    const window = longTurn()
    assert.strictEqual(Window.latestUserAsk(window), "u2")
    const plan = CompressionPlan.compressionPlan(window, 120)
    assert.isFalse(plan.removeIds.includes("u2"), `removed ${plan.removeIds.join(", ")}`)
    assert.isTrue(plan.removeIds.includes("u1"))
  })

  it("trimToBudget never drops the user's latest ask", () => {
    const trimmed = decided(longTurn(), { _tag: "TrimToBudget", budget: 400 }, "trim")
    assert.isTrue(trimmed.history.some((each) => each.id === "u2"))
    assert.isFalse(trimmed.history.some((each) => each.id === "u1"))
  })
})
