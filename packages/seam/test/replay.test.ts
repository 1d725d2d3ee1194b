import { ContextService, EventLog, Message, ToolPairs, Window } from "@ctxlog/core"
import { assert, describe, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import * as fc from "effect/FastCheck"
import { SeamHost } from "../src/index.js"
import { hostLayer } from "./support.js"
import { propertyRuns, yieldToEventLoop } from "../../../vitest.property.js"

const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(" ")

const turnArb = fc.record({
  userWords: fc.integer({ min: 20, max: 60 }),
  calls: fc.array(fc.record({ outputWords: fc.integer({ min: 0, max: 120 }), isError: fc.boolean() }), {
    maxLength: 3
  }),
  parallel: fc.boolean(),
  answerWords: fc.integer({ min: 1, max: 20 }),
  pinUser: fc.constantFrom(false, false, false, true)
})
type Turn = typeof turnArb extends fc.Arbitrary<infer T> ? T : never

const configArb = fc.record({
  level1: fc.integer({ min: 30, max: 100 }),
  gap2: fc.integer({ min: 1, max: 150 }),
  gap3: fc.integer({ min: 1, max: 300 }),
  verbatimWindow: fc.integer({ min: 0, max: 6 }),
  maxSeamsPerLevel: fc.integer({ min: 1, max: 4 }),
  advanceCycle: fc.boolean()
})

/** The messages of turn `i`: tool calls either in one assistant message or one per message. */
const inputsOf = (turn: Turn, i: number): ReadonlyArray<Message.MessageInput> => {
  const user: Message.MessageInput = { ...Message.user(`ask ${i}: ${words(turn.userWords, "w")}`), id: `u${i}` }
  const calls = turn.calls.map((call, j) => ({ ...call, id: `t${i}c${j}` }))
  const results = calls.map((call) => Message.tool(call.id, words(call.outputWords, "o"), call.isError))
  const asCall = (call: (typeof calls)[number]) => Message.toolCall(call.id, "run", { step: call.id })
  const toolMessages = turn.parallel
    ? calls.length === 0
      ? []
      : [Message.assistant("", calls.map(asCall)), ...results]
    : calls.flatMap((call, j) => [Message.assistant("", [asCall(call)]), ...results.slice(j, j + 1)])
  return [user, ...toolMessages, Message.assistant(words(turn.answerWords, "a"))]
}

describe("replay", () => {
  // Event types seen across all generated logs: the last test checks the generator reaches every step.
  const seen = new Set<string>()

  it.effect.prop(
    "a log with seams replays to the live window; no tool pair is ever split",
    [fc.array(turnArb, { minLength: 6, maxLength: 14 }), configArb],
    ([turns, shape]) =>
      Effect.gen(function* () {
        const ctx = yield* ContextService.ContextService
        const log = yield* EventLog.EventLog
        yield* ctx.setSystemPrompt("r", "You are an agent.")
        let live = yield* ctx.load("r")
        for (const [i, turn] of turns.entries()) {
          // One turn of the event loop per step: a long case must not hold the worker (vitest RPC timeouts).
          yield* Effect.promise(yieldToEventLoop)
          live = (yield* ctx.appendMessages("r", inputsOf(turn, i))).window
          // Never pin in the first turn, so some history is always foldable.
          if (turn.pinUser && i > 0) live = (yield* ctx.pin("r", `u${i}`)).window
          const out = yield* SeamHost.runSeamPipeline("r")
          if (out.events.length > 0) live = out.window
          assert.deepStrictEqual(ToolPairs.problems(live.history, live.completedToolIds), [])
        }
        const events = Chunk.toReadonlyArray(yield* Stream.runCollect(log.read("r"))).map((envelope) => envelope.event)
        for (const event of events) seen.add(event._tag)
        assert.isTrue(events.some((event) => event._tag === "SeamProduced"))
        assert.deepStrictEqual(Window.replay(events), live)
        assert.deepStrictEqual(yield* ctx.load("r"), live)
        // Seam bookkeeping points at seam messages that are in history.
        for (const seam of live.seams) {
          assert.strictEqual(live.history.find((message) => message.id === seam.messageId)?.kind, "seam")
        }
        // Pinned user messages are never folded away.
        for (const [i, turn] of turns.entries()) {
          if (turn.pinUser && i > 0) assert.isTrue(live.history.some((message) => message.id === `u${i}`))
        }
      }).pipe(
        Effect.provide(
          hostLayer({
            thresholds: {
              level1: shape.level1,
              level2: shape.level1 + shape.gap2,
              level3: shape.level1 + shape.gap2 + shape.gap3
            },
            verbatimWindow: shape.verbatimWindow,
            maxSeamsPerLevel: shape.maxSeamsPerLevel,
            advanceCycle: shape.advanceCycle
          })
        )
      ),
    { timeout: 120_000, fastCheck: { numRuns: propertyRuns(12, 0.04) } }
  )

  it("the generated logs exercised every seam event", () => {
    for (const tag of ["SeamProduced", "SeamsRecompacted", "BriefingProduced", "CycleAdvanced", "SeamsReset"]) {
      assert.isTrue(seen.has(tag), `no generated log contained ${tag}`)
    }
  })
})
