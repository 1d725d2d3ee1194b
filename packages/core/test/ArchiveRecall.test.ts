/**
 * The archive within reach (issue 39, build item 3): `recall_archived` answers what a summary or a seam
 * replaced, from the log, cut to a budget, and names an id it does not know.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { ArchiveRecall, EventLog, Message, type WindowEvent } from "../src/index.js"
import { appended, message, stampAll } from "./Scenario.js"

const summary = message("sum1", "user", "Summary: the user asked about the cart.", { kind: "summary" })
const seam = message("seam1", "assistant", '<archived_context level="1">\nthe tests\n</archived_context>', {
  kind: "seam"
})

const drafts: ReadonlyArray<WindowEvent.Draft> = [
  appended(message("u1", "user", "what is in src/cart.js?")),
  appended(message("a1", "assistant", [Message.toolCall("c1", "read_file", { path: "src/cart.js" })])),
  appended(message("t1", "tool", [Message.toolResult("c1", "export const applyDiscount = () => 0")])),
  appended(message("a2", "assistant", "It holds applyDiscount.")),
  {
    _tag: "Compacted",
    tier: "hard",
    summary,
    removedIds: ["u1", "a1", "t1", "a2"],
    carryOver: "the user asked about the cart",
    throughVersion: 4,
    cooldownTurns: 0
  },
  appended(message("u2", "user", "run the tests")),
  appended(message("a3", "assistant", "x".repeat(3_000))),
  { _tag: "SeamProduced", level: 1, message: seam, replacedIds: ["u2", "a3"] },
  appended(message("u3", "user", "and now?"))
]
const events = stampAll(drafts)

const run = (request: ArchiveRecall.Request) => Effect.runSync(ArchiveRecall.answer("s", events, request))

describe("ArchiveRecall", () => {
  it("lists every archive and answers what a summary replaced, by its message id or its event id", () => {
    assert.deepStrictEqual(
      ArchiveRecall.archives(events).map((archive) => [archive.eventId, archive.messages.map((each) => each.id)]),
      [
        ["given-5", ["u1", "a1", "t1", "a2"]],
        ["given-8", ["u2", "a3"]]
      ]
    )
    for (const id of ["sum1", "given-5"]) {
      const text = run({ id, budgetTokens: 2_000 })
      assert.include(text, "what is in src/cart.js?")
      assert.include(text, '→ read_file({"path":"src/cart.js"}) #c1')
      assert.include(text, "← #c1: export const applyDiscount = () => 0")
      assert.include(text, "It holds applyDiscount.")
      assert.notInclude(text, "run the tests")
    }
  })

  it("answers the newest archive when no id is given, whole messages while they fit, then how to read on", () => {
    const first = run({ budgetTokens: 300 })
    assert.include(first, "What given-8 (SeamProduced, level 1) replaced:")
    assert.include(first, "run the tests")
    assert.isAtMost(first.length, 300 * 4 + 200)
    assert.include(first, 'more message(s) not shown: call recall_archived with id "given-8" and offset 1')
    // Read on: the long message alone is over the budget, so it comes cut to its head and tail.
    const next = run({ id: "given-8", budgetTokens: 300, offset: 1 })
    assert.notInclude(next, "run the tests")
    assert.include(next, "characters cut")
    assert.isAtMost(next.length, 300 * 4 + 200)
    assert.notInclude(next, "more message(s) not shown")
  })

  it("names an id that answers to no archive, typed", () => {
    const exit = Effect.runSyncExit(ArchiveRecall.answer("s", events, { id: "u3", budgetTokens: 100 }))
    assert.isTrue(Exit.isFailure(exit))
    if (Exit.isFailure(exit))
      assert.include(String(exit.cause), 'no compaction, seam or cycle whose event or message id is "u3"')
  })

  it.effect("reads the stream from the event log", () =>
    Effect.gen(function* () {
      const log = yield* EventLog.EventLog
      yield* log.append("s", events, "no_stream")
      const text = yield* ArchiveRecall.recall("s", { id: "seam1", budgetTokens: 2_000 })
      assert.include(text, "run the tests")
    }).pipe(Effect.provide(EventLog.layerMemory()))
  )
})
