// ADR 0126: skills are a kind the turn places. A replay (`ctxlog whatif`) reads each turn's inputs from
// the log and sets what the recorded prepare injected: the placed skills among them, and an empty
// placement (the turn removed the last turn's skills) as an empty set, like recall.
import { Message, type WindowEvent } from "@ctxlog/core"
import { describe, expect, it } from "@effect/vitest"
import * as Pipeline from "../src/Pipeline.js"
import * as Queries from "../src/Queries.js"

const message = (id: string, role: Message.Role, kind: Message.MessageKind, text: string): Message.Message => ({
  id,
  role,
  kind,
  parts: [Message.text(text)],
  tokens: 5
})

const events: ReadonlyArray<WindowEvent.WindowEvent> = [
  {
    _tag: "MessagesInjected",
    id: "e1",
    kind: "skill",
    messages: [message("s1", "system", "skill", "run-tests: Run the suite.")],
    replacesInHistory: false
  },
  { _tag: "MessageAppended", id: "e2", message: message("u1", "user", "chat", "run the tests") },
  { _tag: "TurnCompleted", id: "e3" },
  { _tag: "MessagesInjected", id: "e4", kind: "skill", messages: [], replacesInHistory: false },
  { _tag: "MessageAppended", id: "e5", message: message("u2", "user", "chat", "thanks") },
  { _tag: "TurnCompleted", id: "e6" }
]

const entries: ReadonlyArray<Queries.Entry> = events.map((event, index) => ({
  version: index + 1,
  eventId: event.id,
  type: event._tag,
  schemaVersion: 1,
  recordedAt: 0,
  event
}))

describe("the replay pipeline and placed skills (ADR 0126)", () => {
  it("sets each turn's recorded skills, and an empty placement as none", () => {
    const input = Pipeline.inputOf(entries)
    expect(input.turns.map((turn) => turn.injected)).toEqual([
      [{ kind: "skill", messages: [{ role: "system", parts: [Message.text("run-tests: Run the suite.")] }] }],
      [{ kind: "skill", messages: [] }]
    ])
  })

  it("describes a placement by its messages and tokens, and an empty one as cleared", () => {
    const injections = events.filter((event) => event._tag === "MessagesInjected")
    expect(injections.map(Queries.describeEvent)).toEqual([
      "skill: 1 message(s), 5 tokens",
      "skill: cleared (no skill context in the next render)"
    ])
  })
})
