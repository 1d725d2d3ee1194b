import { assert, describe, it } from "@effect/vitest"
import { Message, ToolPairs } from "../src/index.js"
import { idsOf, message } from "./Scenario.js"

const call = (id: string, ...calls: ReadonlyArray<string>) =>
  message(
    id,
    "assistant",
    calls.map((callId) => Message.toolCall(callId, "run", null))
  )
const result = (id: string, ...calls: ReadonlyArray<string>) =>
  message(
    id,
    "tool",
    calls.map((callId) => Message.toolResult(callId, "out"))
  )
const user = (id: string) => message(id, "user", id)

describe("ToolPairs", () => {
  it("groups a call with its results, in order of each group's first message", () => {
    const groups = ToolPairs.groups([
      user("u1"),
      call("a1", "c1", "c2"),
      user("u2"),
      result("t1", "c1"),
      result("t2", "c2")
    ])
    assert.deepStrictEqual(groups.map(idsOf), [["u1"], ["a1", "t1", "t2"], ["u2"]])
  })

  it("merges groups that share a result message", () => {
    const groups = ToolPairs.groups([
      call("a1", "c1"),
      user("u1"),
      call("a2", "c2"),
      result("t", "c1", "c2"),
      call("a3", "c3"),
      result("t3", "c3")
    ])
    assert.deepStrictEqual(groups.map(idsOf), [["a1", "a2", "t"], ["u1"], ["a3", "t3"]])
  })

  it("a result without a known call is a group of its own", () => {
    assert.deepStrictEqual(ToolPairs.groups([result("t", "c9"), user("u")]).map(idsOf), [["t"], ["u"]])
  })

  it("finds orphan, duplicate and missing results; pending calls are not problems", () => {
    assert.deepStrictEqual(ToolPairs.problems([call("a1", "c1"), result("t1", "c1")], ["c1"]), [])
    assert.deepStrictEqual(ToolPairs.problems([result("t0", "c1"), call("a1", "c1")]), [
      { _tag: "OrphanResult", messageId: "t0", toolCallId: "c1" }
    ])
    assert.deepStrictEqual(ToolPairs.problems([call("a1", "c1"), result("t1", "c1"), result("t2", "c1")]), [
      { _tag: "DuplicateResult", messageId: "t2", toolCallId: "c1" }
    ])
    assert.deepStrictEqual(ToolPairs.problems([call("a1", "c1", "c2")], ["c1"]), [
      { _tag: "MissingResult", messageId: "a1", toolCallId: "c1" }
    ])
    assert.deepStrictEqual(ToolPairs.pendingCalls([call("a1", "c1", "c2"), result("t1", "c1")]), ["c2"])
  })
})
