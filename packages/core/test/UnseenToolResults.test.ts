/**
 * The unseen-tool-result guarantee in core: which results the window counts as unseen (appended after
 * the last `PromptRendered` and the last assistant message), and `trimToBudget` keeping them with
 * their calls (issue 20, part B).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Either from "effect/Either"
import { Decide, Message, Window, type WindowEvent } from "../src/index.js"
import { appended, message, stampAll } from "./Scenario.js"

const given = (drafts: ReadonlyArray<WindowEvent.Draft>): Window.Window => Window.replay(stampAll(drafts))

const call = message("a2", "assistant", [Message.text("reading"), Message.toolCall("x", "read", { path: "a.ts" })])
const result = message("t1", "tool", [Message.toolResult("x", "y".repeat(4_000))], { tokens: 1_000 })
/** The conversation: a turn stopped on a tool result, then the user speaks again. */
const stopped = [
  message("u1", "user", "hello"),
  message("a1", "assistant", "hi"),
  message("u2", "user", "read a.ts"),
  call,
  result,
  message("u3", "user", "also, hurry")
]

describe("unseen tool results", () => {
  it("are the results after the last render and the last assistant message", () => {
    const window = given(stopped.map(appended))
    assert.deepStrictEqual(Window.unseenToolResults(window), ["t1"])
    assert.deepStrictEqual([...Window.unseenToolPairs(window)].sort(), ["a2", "t1"])
    assert.deepStrictEqual([...Window.unseenToolCallIds(window)], ["x"])
    const rendered = Window.evolve(window, {
      _tag: "PromptRendered",
      id: "r",
      provider: "openai",
      model: "m",
      tokens: window.tokens,
      sha256: "ff"
    })
    assert.deepStrictEqual(Window.unseenToolResults(rendered), [])
    const answered = given([...stopped.slice(0, 5), message("a3", "assistant", "done")].map(appended))
    assert.deepStrictEqual(Window.unseenToolResults(answered), [])
  })

  it("a window built by hand counts every result after the last assistant message", () => {
    const plain: Window.Window = { ...given(stopped.map(appended)) }
    assert.deepStrictEqual(Window.unseenToolResults(plain), ["t1"])
  })

  it("trimToBudget keeps an unseen result and its call when a user message follows it", () => {
    const window = given(stopped.map(appended))
    const events = Decide.decide(window, { _tag: "TrimToBudget", budget: 200 })
    assert.isTrue(Either.isRight(events))
    if (Either.isLeft(events)) return
    const trimmed = Window.replay(stampAll(events.right, "when"), window)
    assert.deepStrictEqual(
      trimmed.history.map((each) => each.id),
      ["a2", "t1", "u3"]
    )
  })
})

describe("Window.hasToolResult", () => {
  it("answers for a call whose result was appended, also after a trim took the result out of history", () => {
    const window = given(stopped.map(appended))
    assert.isTrue(Window.hasToolResult(window, "x"))
    assert.isFalse(Window.hasToolResult(given(stopped.slice(0, 4).map(appended)), "x"))
    assert.isFalse(Window.hasToolResult(window, "no-such-call"))
    const trimmed = Window.evolve(window, { _tag: "HistoryTrimmed", id: "trim", removedIds: ["a2", "t1"], budget: 100 })
    assert.isFalse(trimmed.history.some((m) => m.id === "t1"))
    assert.isTrue(Window.hasToolResult(trimmed, "x"))
  })
})
