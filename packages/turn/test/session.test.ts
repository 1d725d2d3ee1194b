/** `Turn.open`: a stream's turns as a value (the state in a `SynchronizedRef`, the cache in `Turn.layer`). */
import { Message } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SynchronizedRef from "effect/SynchronizedRef"
import { type Policy, Turn } from "../src/index.js"
import { eventsOf, stack } from "./support.js"

const policy = (contextWindow: number): Policy.Policy => ({
  builder: { provider: "anthropic", model: "claude-sonnet-4-5", contextWindow, maxOutputTokens: 512 },
  compaction: { softThreshold: 0.7, hardThreshold: 0.85, targetRatio: 0.45, cooldownTurns: 0 }
})

const layer = () => Layer.merge(stack(), Turn.layer)

/** The model of these tests: a tool call on the first call of a turn, a plain answer after it. */
const answerAt = (iteration: number): Turn.Answer =>
  iteration === 0
    ? {
        answer: [Message.toolCall("call_1", "read_file", { path: "a.txt" })],
        results: [Message.toolResult("call_1", "alpha")]
      }
    : { answer: [Message.text("done")] }

/** What a stream's log holds, without ids and times: the event tags in order. */
const tagsOf = (stream: string) =>
  Effect.map(eventsOf(stream), (events) => events.map((envelope) => envelope.event._tag))

describe("Turn.open", () => {
  it.effect("run writes what the hand-written loop over prepare, render and complete writes", () =>
    Effect.gen(function* () {
      const p = policy(16_384)
      const input: Turn.Input = { messages: [Message.user("read a.txt")], turnReminder: "it is Monday" }
      const session = yield* Turn.open("by-run", p)
      const seen: Array<number> = []
      const result = yield* session.run(input, (_rendered, iteration) =>
        Effect.sync(() => {
          seen.push(iteration)
          return answerAt(iteration)
        })
      )
      // The same turn by hand, on another stream.
      yield* Turn.prepare("by-hand", input, p)
      let hand = result.window
      for (let iteration = 0; ; iteration++) {
        const rendered = yield* Turn.render("by-hand", p, { iteration, turnReminder: input.turnReminder })
        const answer = answerAt(iteration)
        const endTurn = Message.toolCallsOf({ parts: answer.answer }).length === 0
        hand = yield* Turn.complete(
          "by-hand",
          { ...answer, estimatedInputTokens: rendered.built.stats.total, endTurn, turnReminder: input.turnReminder },
          p
        ).pipe(Effect.map((step) => step.window))
        if (endTurn) break
      }
      assert.deepStrictEqual(seen, [0, 1])
      assert.strictEqual(result.modelCalls, 2)
      assert.strictEqual(Message.textOf({ parts: result.answer }), "done")
      assert.deepStrictEqual(yield* tagsOf("by-run"), yield* tagsOf("by-hand"))
      assert.isTrue((yield* tagsOf("by-run")).includes("TurnCompleted"))
      assert.deepStrictEqual(
        result.window.history.map((message) => Message.textOf(message)),
        hand.history.map((message) => Message.textOf(message))
      )
    }).pipe(Effect.provide(layer()))
  )

  it.effect("holds the iteration and the turn's reminder between steps", () =>
    Effect.gen(function* () {
      const p = policy(16_384)
      const session = yield* Turn.open("state", p)
      // Before any user message a session continues a turn begun before it.
      assert.strictEqual((yield* SynchronizedRef.get(session.state)).iteration, 1)
      yield* session.prepare({ messages: [Message.user("hello")], turnReminder: "a reminder of some length" })
      assert.strictEqual((yield* SynchronizedRef.get(session.state)).iteration, 0)
      const first = yield* session.render()
      // The render ran against the budget of the turn's reminder, not the policy's (none).
      assert.deepStrictEqual(first.budget, Turn.budget(p, "a reminder of some length"))
      assert.notDeepEqual(first.budget, Turn.budget(p))
      assert.strictEqual((yield* SynchronizedRef.get(session.state)).iteration, 1)
      yield* session.complete({
        answer: [Message.toolCall("c1", "ls", {})],
        results: [Message.toolResult("c1", "a.txt")],
        endTurn: false
      })
      yield* session.render()
      assert.strictEqual((yield* SynchronizedRef.get(session.state)).iteration, 2)
      // A session counts on until the next user message (the end of a turn does not start one).
      yield* session.complete({ answer: [Message.text("bye")], endTurn: true })
      assert.strictEqual((yield* SynchronizedRef.get(session.state)).iteration, 2)
      // A step's own options win over the session's.
      yield* session.prepare({ messages: [Message.user("again")] })
      assert.strictEqual((yield* SynchronizedRef.get(session.state)).turnReminder, undefined)
      yield* session.render({ iteration: 5 })
      assert.strictEqual((yield* SynchronizedRef.get(session.state)).iteration, 6)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("an invalid policy fails with InvalidPolicy and writes nothing", () =>
    Effect.gen(function* () {
      const bad: Policy.Policy = {
        builder: { provider: "anthropic", model: "m", contextWindow: 8192, maxOutputTokens: 8000 }
      }
      const failed = yield* Effect.flip(Turn.open("invalid", bad))
      assert.strictEqual(failed._tag, "InvalidPolicy")
      assert.strictEqual(failed.field, "builder.contextWindow")
      assert.strictEqual((yield* eventsOf("invalid")).length, 0)
    }).pipe(Effect.provide(layer()))
  )

  it.effect("sessions on one stream share the cache layer: a policy another session replaced is recorded again", () =>
    Effect.gen(function* () {
      const small = yield* Turn.open("shared", policy(8192))
      const large = yield* Turn.open("shared", policy(16_384))
      const turnOf = (session: Turn.Session, n: number) =>
        session.run({ messages: [Message.user(`question ${n}`)] }, () =>
          Effect.succeed({ answer: [Message.text(`answer ${n}`)] })
        )
      yield* turnOf(small, 1)
      yield* turnOf(small, 2)
      yield* turnOf(large, 3)
      yield* turnOf(small, 4)
      const recorded = (yield* eventsOf("shared")).flatMap((envelope) =>
        envelope.event._tag === "TurnPolicySet"
          ? [(envelope.event.policy.builder as { readonly contextWindow: number }).contextWindow]
          : []
      )
      assert.deepStrictEqual(recorded, [8192, 16_384, 8192])
    }).pipe(Effect.provide(layer()))
  )
})
