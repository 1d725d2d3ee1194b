/**
 * A message's `name` and the opaque `providerOptions` on a message and on its parts (0.8.0, issue 35):
 * what a framework hands ctxlog that ctxlog does not interpret is kept with the message, stored in the
 * event, counted as no tokens and given back as it came, through an append, a reload from the log and
 * the codec.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { ContextService, EventCodec, EventLog, Message, TokenCounter, Window } from "../src/index.js"

const answer: Message.MessageInput = {
  role: "assistant",
  name: "researcher",
  providerOptions: { openai: { itemId: "msg_0a1", phase: "final_answer" } },
  parts: [
    { ...Message.text("Looking."), providerOptions: { openai: { itemId: "msg_0a1" } } },
    {
      ...Message.toolCall("call_1", "ls", { path: "." }),
      providerOptions: { openai: { itemId: "fc_0b2" }, google: { thoughtSignature: "c2ln" } }
    }
  ]
}

describe("names and provider options", () => {
  it.effect("are kept through an append, a reload and the codec, and count no tokens", () =>
    Effect.gen(function* () {
      const ctx = yield* ContextService.ContextService
      const counter = yield* TokenCounter.TokenCounter
      yield* ctx.appendMessages("s", [Message.user("list it"), answer])
      const stored = Window.messages(yield* ctx.load("s")).at(-1)
      assert.isDefined(stored)
      assert.strictEqual(stored?.name, "researcher")
      assert.deepStrictEqual(stored?.providerOptions, answer.providerOptions)
      assert.deepStrictEqual(stored?.parts, answer.parts)
      const bare: Message.MessageInput = {
        role: "assistant",
        parts: [Message.text("Looking."), Message.toolCall("call_1", "ls", { path: "." })]
      }
      assert.strictEqual(stored?.tokens, counter.countMessage(bare))

      const log = yield* EventLog.EventLog
      const envelopes = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("s")))
      const events = envelopes.map((envelope) => envelope.event)
      const encoded = yield* EventCodec.encodeAll(events)
      const decoded = yield* Effect.forEach(encoded, (event) => EventCodec.decode(event))
      assert.deepStrictEqual(decoded, events)
    }).pipe(Effect.provide(ContextService.layerMemory()))
  )

  it.effect("a tool result with provider options is not folded into plain content", () =>
    Effect.sync(() => {
      const only = { ...Message.text("ok"), providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }
      const result = Message.toolResultParts("c1", [only])
      assert.deepStrictEqual(result.parts, [only])
    })
  )
})
