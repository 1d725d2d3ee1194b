import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { ContextService, Message, Transcript } from "../src/index.js"
import { checkConsistent, live } from "./Scenario.js"
import { readTranscript, transcriptFiles } from "../src/transcripts.js"

/** The failure of `effect`; a success fails the test. */
const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.either(effect), (result) =>
    Either.isLeft(result) ? Effect.succeed(result.left) : Effect.sync(() => assert.fail("expected a failure"))
  )

describe("Transcript.fromOpenAIChat", () => {
  it.effect("converts every role, keeps tool call ids and parses JSON arguments", () =>
    Effect.gen(function* () {
      const inputs = yield* Transcript.fromOpenAIChat([
        { role: "system", content: "be brief" },
        {
          role: "developer",
          content: [
            { type: "text", text: "dev " },
            { type: "text", text: "rules" }
          ]
        },
        { role: "user", content: "list files" },
        {
          role: "assistant",
          content: null,
          reasoning_content: "thinking it over",
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "ls", arguments: '{"path":"."}' } },
            { id: "call_b", type: "function", function: { name: "sh", arguments: "not json" } }
          ]
        },
        { role: "tool", tool_call_id: "call_a", content: "a.txt" },
        { role: "tool", tool_call_id: "call_b", content: "" },
        { role: "assistant", content: null }
      ])
      assert.deepStrictEqual(inputs, [
        Message.system("be brief"),
        Message.system("dev rules"),
        Message.user("list files"),
        {
          role: "assistant",
          parts: [
            Message.reasoning("thinking it over"),
            Message.toolCall("call_a", "ls", { path: "." }),
            Message.toolCall("call_b", "sh", "not json")
          ]
        },
        Message.tool("call_a", "a.txt"),
        Message.tool("call_b", ""),
        { role: "assistant", parts: [Message.text("")] }
      ])
    })
  )

  it.effect(
    "imports the shapes other agent logs use: legacy function calls, parsed arguments, ids left out, bare image URLs, a bare array",
    () =>
      Effect.gen(function* () {
        const inputs = yield* Transcript.fromTranscriptJson([
          {
            role: "user",
            content: [
              { type: "text", text: "look" },
              { type: "image_url", image_url: "https://x/a.png" }
            ]
          },
          { role: "assistant", content: null, function_call: { name: "ls", arguments: '{"path":"."}' } },
          { role: "function", name: "ls", content: "a.txt" },
          {
            role: "assistant",
            tool_calls: [
              { type: "function", function: { name: "cat", arguments: { file: "a.txt" } } },
              { id: "call_z", function: { name: "pwd" } }
            ]
          },
          { role: "tool", tool_call_id: "call_3_0", content: "hello" },
          { role: "tool", tool_call_id: "call_z", content: "/" },
          {
            role: "user",
            content: [{ type: "image_url", image_url: { url: "https://x/b.png", detail: "original" } }]
          }
        ])
        assert.deepStrictEqual(inputs, [
          {
            role: "user",
            parts: [Message.text("look"), { type: "image", source: { type: "url", url: "https://x/a.png" } }]
          },
          { role: "assistant", parts: [Message.toolCall("fn_1", "ls", { path: "." })] },
          Message.tool("fn_1", "a.txt"),
          {
            role: "assistant",
            parts: [Message.toolCall("call_3_0", "cat", { file: "a.txt" }), Message.toolCall("call_z", "pwd", {})]
          },
          Message.tool("call_3_0", "hello"),
          Message.tool("call_z", "/"),
          { role: "user", parts: [{ type: "image", source: { type: "url", url: "https://x/b.png" } }] }
        ])
      })
  )

  it.effect("a bad message is a typed TranscriptError with its index", () =>
    Effect.gen(function* () {
      const ok = { role: "user", content: "hi" }
      const badRole = yield* failureOf(Transcript.fromOpenAIChat([ok, ok, { role: "robot", content: "x" }]))
      assert.instanceOf(badRole, Transcript.TranscriptError)
      assert.strictEqual(badRole.index, 2)
      assert.include(badRole.message, "transcript message #2")
      const noCallId = yield* failureOf(Transcript.fromOpenAIChat([ok, { role: "tool", content: "out" }]))
      assert.strictEqual(noCallId.index, 1)
      assert.match(noCallId.detail, /without tool_call_id/)
      const badCall = yield* failureOf(
        Transcript.fromOpenAIChat([{ role: "assistant", tool_calls: [{ id: "c", function: { arguments: "{}" } }] }])
      )
      assert.strictEqual(badCall.index, 0)
      const orphanFunction = yield* failureOf(
        Transcript.fromOpenAIChat([ok, { role: "function", name: "ls", content: "a.txt" }])
      )
      assert.strictEqual(orphanFunction.index, 1)
      assert.match(orphanFunction.detail, /answers no earlier function_call/)
      const notObject = yield* failureOf(Transcript.fromOpenAIChat([ok, "hello"]))
      assert.strictEqual(notObject.index, 1)
      const noMessages = yield* failureOf(Transcript.fromTranscriptJson({ turns: [] }))
      assert.strictEqual(noMessages.index, -1)
    })
  )
})

describe("shared transcripts", () => {
  const files = transcriptFiles()

  it("are present", () => {
    assert.isAtLeast(files.length, 4)
  })

  for (const file of files) {
    it.effect(`${file} imports, appends with its tool pairs intact, and replays to the live window`, () =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const inputs = yield* Transcript.fromTranscriptJson(readTranscript(file))
        const [first, ...rest] = inputs
        const system = first?.role === "system" ? [first] : []
        if (system.length > 0) yield* ctx.setSystemPrompt(file, system)
        const out = yield* ctx.appendMessages(file, system.length > 0 ? rest : inputs)
        assert.strictEqual(out.window.history.length + out.window.system.length, inputs.length)
        yield* checkConsistent(out, file)
        const trimmed = yield* ctx.trimToBudget(file, Math.floor(out.window.tokens.total / 3))
        assert.isBelow(trimmed.window.history.length, out.window.history.length)
        yield* checkConsistent(trimmed, file)
      }).pipe(Effect.provide(live()))
    )
  }
})
