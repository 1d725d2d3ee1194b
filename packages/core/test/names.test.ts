// One name per thing (ADR 0060): the renamed public names answer as before under their new names (the
// old names, deprecated aliases, were removed in 0.8.0: issue 40).
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { ConversationMemory, Validation } from "../src/index.js"

describe("one name per thing", () => {
  it.effect("validateAppendInput names the bad stream id and passes good input", () =>
    Effect.gen(function* () {
      const bad = yield* Effect.either(Validation.validateAppendInput("", []))
      assert.isTrue(Either.isLeft(bad))
      const good = yield* Effect.either(Validation.validateAppendInput("s", [{ _tag: "X", n: 1 }]))
      assert.isTrue(Either.isRight(good))
    })
  )

  it("a MemoryError names its stream", () => {
    const error = new ConversationMemory.MemoryError({ conversationId: "s1", operation: "load", detail: "gone" })
    assert.strictEqual(error.stream, "s1")
    assert.strictEqual(error.message, 'memory load for "s1" failed: gone')
  })
})
