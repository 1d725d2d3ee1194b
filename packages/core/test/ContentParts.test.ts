/**
 * Content parts added in 0.4.0 (issue 23): tool results made of parts, provider-executed tool parts,
 * citations, tool approvals. The message-carrying events' schema versions went up by one (the
 * upcasters pass old data through: the additions are optional fields and new part kinds): a log
 * written by 0.3 (the fixture, `MessageAppended` v3) decodes unchanged, and the new shapes round-trip
 * through the codec at the new version and are checked like the old ones.
 */
import { readFileSync } from "node:fs"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { EventCodec, Message, TokenCounter, WindowEvent } from "../src/index.js"

const fixture = readFileSync(new URL("./fixtures/content-parts-v0.3.jsonl", import.meta.url), "utf8")

describe("content parts in the log", () => {
  it.effect("a 0.3 log with every part kind of its day still decodes, unchanged", () =>
    Effect.gen(function* () {
      const events = yield* EventCodec.decodeJsonLines(fixture)
      const raw = fixture
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).data)
      assert.deepStrictEqual(events, raw)
      assert.strictEqual(events.length, 3)
    })
  )

  it.effect("every new part kind round-trips through the codec", () =>
    Effect.gen(function* () {
      const cited: Message.TextPart = {
        ...Message.text("Paris"),
        citations: [{ type: "char_location", cited_text: "Paris", document_index: 0 }]
      }
      const parts: ReadonlyArray<Message.Part> = [
        cited,
        Message.serverToolCall("anthropic", "srv_1", "web_search", { query: "x" }),
        Message.serverToolResult("anthropic", "srv_1", "web_search_tool_result", [{ type: "web_search_result" }]),
        Message.toolCall("c1", "rm", { path: "x" }),
        Message.toolApprovalRequest("ap1", "c1")
      ]
      const result = Message.toolResultParts("c1", [
        Message.text("shot:"),
        Message.imageBase64("image/png", "iVBORw0KGgo=", { width: 20, height: 20 }),
        Message.documentBase64("application/pdf", "JVBERi0=", { title: "spec" })
      ])
      const events: ReadonlyArray<WindowEvent.WindowEvent> = [
        { _tag: "MessageAppended", id: "e1", message: { id: "a1", role: "assistant", kind: "chat", parts, tokens: 9 } },
        {
          _tag: "MessageAppended",
          id: "e2",
          message: {
            id: "t1",
            role: "tool",
            kind: "chat",
            parts: [Message.toolApprovalResponse("ap1", false, "no"), result],
            tokens: 9
          }
        }
      ]
      const stored = yield* EventCodec.encodeAll(events)
      assert.deepStrictEqual(
        stored.map((event) => event.schemaVersion),
        [WindowEvent.schemaVersions.MessageAppended, WindowEvent.schemaVersions.MessageAppended]
      )
      const decoded = yield* Effect.forEach(stored, (event) => EventCodec.decode(event))
      assert.deepStrictEqual(decoded, events)
    })
  )

  it.effect("a malformed new part is a typed error naming where", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.either(
        EventCodec.encodeAll([
          {
            _tag: "MessageAppended",
            id: "e1",
            message: {
              id: "a1",
              role: "assistant",
              kind: "chat",
              parts: [{ type: "server_tool_call", id: "s", name: "web_search", input: {} }],
              tokens: 1
            }
          }
        ])
      )
      assert.isTrue(Either.isLeft(bad) && bad.left._tag === "EventEncodeError" && bad.left.path.includes("parts"))
    })
  )

  it("tool results made of parts: content is their text; a rewrite of content supersedes the parts", () => {
    const result = Message.toolResultParts("c1", [
      Message.text("a"),
      Message.imageUrl("https://x/y.png"),
      Message.text("b")
    ])
    assert.strictEqual(result.content, "a\nb")
    assert.strictEqual(Message.toolResultContentOf(result), result.parts)
    assert.deepStrictEqual(Message.toolResultContentOf({ ...result, content: "[pruned]" }), [Message.text("[pruned]")])
    // One plain text part is stored as plain content.
    assert.deepStrictEqual(Message.toolResultParts("c1", [Message.text("x")]), Message.toolResult("c1", "x"))
  })

  it("token counts: media in tool results is priced, server parts are counted, approvals and citations are not", () => {
    const counter = TokenCounter.heuristic()
    const image = Message.imageBase64("image/png", "iVBORw0KGgo=", { width: 200, height: 200 })
    const text = counter.countMessage({ parts: [Message.toolResult("c1", "a")] })
    const withImage = counter.countMessage({ parts: [Message.toolResultParts("c1", [Message.text("a"), image])] })
    assert.strictEqual(withImage - text, counter.countMessage({ parts: [image] }) - counter.countMessage({ parts: [] }))
    const pruned = counter.countMessage({
      parts: [{ ...Message.toolResultParts("c1", [Message.text("a"), image]), content: "a" }]
    })
    assert.strictEqual(pruned, withImage, "content unchanged: the parts still stand")
    assert.isAbove(
      counter.countMessage({
        parts: [Message.serverToolCall("anthropic", "s", "web_search", { query: "long query" })]
      }),
      counter.countMessage({ parts: [] })
    )
    assert.strictEqual(
      counter.countMessage({ parts: [Message.text("x"), Message.toolApprovalRequest("ap", "c")] }),
      counter.countMessage({
        parts: [{ ...Message.text("x"), citations: [{ type: "char_location", cited_text: "zzzz" }] }]
      })
    )
  })
})
