import { LanguageModel, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as Either from "effect/Either"
import { AnthropicCtx, type CtxBuilder, OfflineModel, OpenAICtx, RetryPolicy } from "../src/index.js"
import { Window } from "@ctxlog/core"

const ask = (text: string): LanguageModel.ModelRequest => ({
  messages: [{ role: "user", parts: [Message.text(text)] }]
})

describe("OfflineModel", () => {
  it.effect("echoes the last user message, deterministically", () =>
    Effect.gen(function* () {
      const model = yield* LanguageModel.LanguageModel
      const first = yield* model.generate(ask("hello there"))
      const second = yield* model.generate(ask("hello there"))
      assert.deepStrictEqual(first.parts, [Message.text("You said: hello there")])
      assert.deepStrictEqual(first, second)
      assert.strictEqual(first.provider, "offline")
      assert.isAbove(first.usage.inputTokens, 0)
    }).pipe(Effect.provide(OfflineModel.layer()))
  )

  it.effect("issues tool calls from /call lines and then reports their results", () =>
    Effect.gen(function* () {
      const model = yield* LanguageModel.LanguageModel
      const call = yield* model.generate(ask('Please\n/call read_file {"path": "a.ts"}\n/call ls'))
      assert.strictEqual(call.stopReason, "tool_use")
      assert.deepStrictEqual(call.parts, [
        Message.toolCall("offline_call_1_1", "read_file", { path: "a.ts" }),
        Message.toolCall("offline_call_1_2", "ls", {})
      ])
      const after = yield* model.generate({
        messages: [
          { role: "user", parts: [Message.text("/call ls")] },
          { role: "assistant", parts: call.parts },
          { role: "tool", parts: [Message.toolResult("offline_call_1_2", "a.ts b.ts")] }
        ]
      })
      assert.deepStrictEqual(after.parts, [Message.text("Tool results:\n- offline_call_1_2: a.ts b.ts")])
    }).pipe(Effect.provide(OfflineModel.layer(OfflineModel.echoScript, "offline-echo", { idPrefix: "offline_call" })))
  )

  it.effect("plays a list of replies and fails past its end", () =>
    Effect.gen(function* () {
      const model = yield* LanguageModel.LanguageModel
      const one = yield* model.generate(ask("x"))
      assert.deepStrictEqual(one.parts, [Message.text("first")])
      const error = yield* Effect.flip(model.generate(ask("y")))
      assert.strictEqual(error.reason, "bad_request")
    }).pipe(Effect.provide(OfflineModel.layer(OfflineModel.fromReplies([{ text: "first" }]))))
  )

  it.effect("streams text a word at a time and ends with Done", () =>
    Effect.gen(function* () {
      const model = yield* LanguageModel.LanguageModel
      const chunks = Chunk.toReadonlyArray(yield* Stream.runCollect(model.stream(ask("a b"))))
      assert.deepStrictEqual(
        chunks.filter((c) => c._tag === "TextDelta").map((c) => c.text),
        ["You ", "said: ", "a ", "b"]
      )
      assert.strictEqual(chunks[chunks.length - 1]?._tag, "Done")
    }).pipe(Effect.provide(OfflineModel.layer()))
  )
})

describe("RetryPolicy.parseRetryAfter", () => {
  const headers = (entries: Record<string, string>) => ({ get: (name: string) => entries[name] ?? null })
  it("reads retry-after-ms, seconds and HTTP dates", () => {
    const now = Date.parse("2026-11-22T00:00:00Z")
    assert.strictEqual(RetryPolicy.parseRetryAfter(headers({ "retry-after-ms": "250" }), now), 250)
    assert.strictEqual(RetryPolicy.parseRetryAfter(headers({ "retry-after": "3" }), now), 3000)
    assert.strictEqual(
      RetryPolicy.parseRetryAfter(headers({ "retry-after": "Sun, 22 Nov 2026 00:00:05 GMT" }), now),
      5000
    )
    assert.isUndefined(RetryPolicy.parseRetryAfter(headers({ "retry-after": "soon" }), now))
    assert.isUndefined(RetryPolicy.parseRetryAfter(headers({}), now))
  })

  it.effect("tool-call ids differ between instances (two runs, or processes, sharing one log)", () =>
    Effect.gen(function* () {
      const first = yield* OfflineModel.make()
      const second = yield* OfflineModel.make()
      const a = yield* first.generate(ask("/call ls"))
      const b = yield* second.generate(ask("/call ls"))
      const idOf = (response: LanguageModel.ModelResponse) => Message.toolCallsOf({ parts: response.parts })[0]?.id
      assert.isDefined(idOf(a))
      assert.notStrictEqual(idOf(a), idOf(b))
      assert.match(idOf(a) ?? "", /^offline_[0-9a-f-]{36}_1_1$/)
    })
  )

  it.effect("generateRequest answers a rendered request of every builder like generate answers the window", () =>
    Effect.gen(function* () {
      const history = [
        Message.user("Please look"),
        Message.assistant("Looking.", [Message.toolCall("c1", "ls", { path: "." })]),
        Message.tool("c1", "a.ts b.ts"),
        Message.assistant("Two files."),
        Message.user('/call read_file {"path": "a.ts"}')
      ]
      const window: Window.Window = {
        ...Window.empty,
        system: [{ ...Message.system("Be brief."), id: "s", kind: "chat", tokens: 3 }],
        history: history.map((input, index) => ({ ...input, id: `m${index}`, kind: "chat", tokens: 5 }))
      }
      const builders: ReadonlyArray<CtxBuilder.CtxBuilder<CtxBuilder.RenderedRequest>> = [
        AnthropicCtx.make({ model: "claude-sonnet-4-5" }),
        OpenAICtx.make({ model: "gpt-4o" }),
        OpenAICtx.makeResponses({ model: "gpt-4o" })
      ]
      for (const builder of builders) {
        const built = builder.build(window)
        if (Either.isLeft(built)) return assert.fail(built.left.message)
        const neutral = OfflineModel.fromRendered(built.right.request)
        assert.strictEqual(neutral.system, "Be brief.", builder.name)
        assert.deepStrictEqual(
          neutral.messages.map((message) => [message.role, message.parts]),
          history.map((message) => [message.role, message.parts]),
          builder.name
        )
        const model = yield* OfflineModel.make(OfflineModel.echoScript, "offline-echo", { idPrefix: "p" })
        const response = yield* model.generateRequest(built.right.request)
        assert.deepStrictEqual(response.parts, [Message.toolCall("p_1_1", "read_file", { path: "a.ts" })], builder.name)
      }
    })
  )
})
