// The agent's lines at 80 columns: the status line and the demo's closing table break between words,
// never inside one; the sessions listing keeps each id whole within 80 columns (stacked when needed).
import { assert, describe, it } from "@effect/vitest"
import * as Sessions from "../src/Sessions.js"
import * as Ui from "../src/Ui.js"

/** Every word of `text` is whole on some line of `wrapped`, and no line is wider than `width`. */
const wrappedWhole = (text: string, wrapped: string, width: number) => {
  const lines = wrapped.split("\n")
  for (const line of lines) assert.isAtMost([...line].length, width, line)
  const words = new Set(lines.flatMap((line) => line.trim().split(/\s+/)))
  for (const word of text.split(/\s+/).filter((w) => w.length > 0)) assert.isTrue(words.has(word), `"${word}" was cut`)
}

describe("layout at 80 columns", () => {
  it("the status line breaks at its separators", () => {
    const text = Ui.statusText({
      tokens: { system: 99, knowledge: 710, taskState: 32, signals: 0, history: 8600, total: 9441 } as never,
      budget: 15000,
      events: 34,
      tier: "trim,seam-produced",
      seamLevel: 2
    })
    assert.isAbove(text.length, 80)
    const wrapped = Ui.wrapWords(text, 80)
    wrappedWhole(text, wrapped, 80)
    assert.match(wrapped.split("\n")[1] ?? "", /^ {2}│ /)
  })

  it("the closing table wraps its prose column under itself", () => {
    const rows = [
      ["", "count", "what it is"],
      ["soft tier, mid-iteration", "12", "the same between tool calls of one turn (no model call) and some more words"],
      ["hash chain", "verified", "every event chained to the one before it"]
    ]
    const wrapped = Ui.tableWrappingLast(rows, 80)
    const lines = wrapped.split("\n")
    for (const line of lines) assert.isAtMost([...line].length, 80, line)
    const column = lines[0]?.indexOf("what it is") ?? -1
    assert.isAbove(column, 0)
    // A continuation row holds only prose, starting at the prose column.
    const continuation = lines.find((line) => line.startsWith(" ".repeat(column)) && line.trim().length > 0)
    assert.isDefined(continuation, wrapped)
    wrappedWhole(rows.flat().join(" "), wrapped.replace(/\s+/g, " "), Number.POSITIVE_INFINITY)
  })

  it("sessions keep each id whole within 80 columns", () => {
    const session = {
      stream: "agent-20260301-101500-a1b2c3",
      events: 1234,
      tokens: 12345,
      turns: 40,
      compactions: 14,
      seams: 3,
      lastActivity: Date.UTC(2026, 2, 1, 10, 15),
      window: undefined as never
    }
    const text = Sessions.format([session, { ...session, stream: "agent-20260301-101600-d4e5f6" }], 80)
    for (const line of text.split("\n")) assert.isAtMost([...line].length, 80, line)
    assert.match(text, /^agent-20260301-101500-a1b2c3$/m)
    assert.match(text, /^agent-20260301-101600-d4e5f6$/m)
    assert.match(Sessions.format([session], 200), /^agent-20260301-101500-a1b2c3 {2}/m)
  })
})

describe("one definition of a compaction", () => {
  it("the agent counts the event types the inspector counts", async () => {
    const { Queries } = await import("../../inspector/src/index.js")
    assert.deepStrictEqual([...Sessions.compactionTypes].sort(), [...Queries.compactionTypes].sort())
  })
})
