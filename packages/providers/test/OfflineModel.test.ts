import { LanguageModel, Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { OfflineModel, RetryPolicy } from "../src/index.js"

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
    }).pipe(Effect.provide(OfflineModel.layer()))
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
})
