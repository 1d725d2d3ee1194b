// The viewer's message pane and content search, as pure functions over core's window and the entries.
import { describe, expect, it } from "@effect/vitest"
import { Message, Window, type WindowEvent } from "@ctxlog/core"
import * as ContentSearch from "../src/ContentSearch.js"
import * as MessageDetail from "../src/MessageDetail.js"
import * as Queries from "../src/Queries.js"

const chat = (id: string, role: Message.Role, parts: ReadonlyArray<Message.Part>, tokens: number): Message.Message => ({
  id,
  role,
  kind: "chat",
  parts: [...parts],
  tokens
})

const longResult = `first line\n${"x".repeat(500)}\nlast line`
const events: ReadonlyArray<WindowEvent.WindowEvent> = [
  { _tag: "SystemPromptSet", id: "e1", messages: [chat("sys", "system", [Message.text("be brief")], 3)] },
  { _tag: "TaskGoalSet", id: "e2", goal: "Find the Needle in the goal", tokens: 6 },
  { _tag: "MessageAppended", id: "e3", message: chat("u1", "user", [Message.text("read a.txt")], 4) },
  {
    _tag: "MessageAppended",
    id: "e4",
    message: chat("a1", "assistant", [Message.reasoning("think"), Message.toolCall("c1", "read", { path: "a.txt" })], 9)
  },
  { _tag: "MessageAppended", id: "e5", message: chat("r1", "tool", [Message.toolResult("c1", longResult)], 120) },
  {
    _tag: "MessageAppended",
    id: "e6",
    message: chat(
      "img",
      "user",
      [Message.text("see"), Message.imageBase64("image/png", "A".repeat(400), { width: 10, height: 20 })],
      90
    )
  },
  { _tag: "MessagesRemoved", id: "e7", messageIds: ["r1"], reason: "test" }
]

const entries: ReadonlyArray<Queries.Entry> = events.map((event, i) => ({
  version: i + 1,
  eventId: event.id,
  type: event._tag,
  schemaVersion: 1,
  recordedAt: 0,
  event
}))

const at = (version: number) => Window.replay(events.slice(0, version))
const detail = (version: number, id: string) =>
  MessageDetail.detail(at(version), Queries.blame(entries, version), id, (message) => Queries.preview(message))

describe("MessageDetail.detail", () => {
  it("shows every part whole, the tokens, the origin and the tool pair from both sides", () => {
    const call = detail(6, "a1")
    const result = detail(6, "r1")
    if (call instanceof MessageDetail.MessageNotFound || result instanceof MessageDetail.MessageNotFound) {
      throw new Error("expected both messages at v6")
    }
    expect(call.tokens).toBe(9)
    expect(call.addedBy).toMatchObject({ version: 4, eventId: "e4", type: "MessageAppended", action: "added" })
    expect(call.parts).toEqual([
      { type: "reasoning", text: "think", opaque: false },
      { type: "tool_call", id: "c1", name: "read", input: JSON.stringify({ path: "a.txt" }, null, 2) }
    ])
    expect(call.toolPairs).toEqual([
      {
        toolCallId: "c1",
        name: "read",
        call: { messageId: "a1", preview: expect.any(String) },
        result: { messageId: "r1", preview: expect.any(String) }
      }
    ])
    expect(result.parts).toEqual([{ type: "tool_result", toolCallId: "c1", content: longResult, isError: false }])
    expect(result.toolPairs[0]).toMatchObject({ name: "read", call: { messageId: "a1" }, result: { messageId: "r1" } })
  })

  it("media are metadata, never their bytes", () => {
    const image = detail(6, "img")
    if (image instanceof MessageDetail.MessageNotFound) throw new Error("expected the image message")
    expect(image.parts[1]).toEqual({ type: "image", source: "base64 image/png", bytes: 300, detail: "10×20 px" })
    expect(JSON.stringify(image)).not.toContain("AAAA")
  })

  it("a side that left the window is null, and a message not in the window is a MessageNotFound", () => {
    const call = detail(7, "a1")
    if (call instanceof MessageDetail.MessageNotFound) throw new Error("expected a1 at v7")
    expect(call.toolPairs[0]?.result).toBeNull()
    const gone = detail(7, "r1")
    expect(gone).toBeInstanceOf(MessageDetail.MessageNotFound)
    expect(gone instanceof MessageDetail.MessageNotFound ? gone.message : "").toBe(
      'message "r1" is not in the window at version 7'
    )
  })
})

describe("ContentSearch.search", () => {
  it("finds text in messages, tool calls, results and the goal, case-insensitively, one hit per event", () => {
    expect(ContentSearch.search(entries, "A.TXT").hits.map((hit) => [hit.version, hit.messageId])).toEqual([
      [3, "u1"],
      [4, "a1"]
    ])
    expect(ContentSearch.search(entries, "needle").hits).toEqual([
      { version: 2, messageId: null, snippet: "Find the Needle in the goal" }
    ])
    const last = ContentSearch.search(entries, "last line")
    expect(last.total).toBe(1)
    expect(last.hits[0]?.snippet.startsWith("…")).toBe(true)
  })

  it("an empty query finds nothing; ids and field names are not content; the limit caps the hits, not the total", () => {
    expect(ContentSearch.search(entries, "").total).toBe(0)
    expect(ContentSearch.search(entries, "e4").total).toBe(0)
    expect(ContentSearch.search(entries, "MessageAppended").total).toBe(0)
    const capped = ContentSearch.search(entries, "e", 1)
    expect(capped.hits).toHaveLength(1)
    expect(capped.total).toBeGreaterThan(1)
  })
})
